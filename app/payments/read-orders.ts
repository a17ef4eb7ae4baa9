// Reads gateway orders authoritatively with as few calls as the quota deserves: one order
// by GET /orders/info, several by one GET /orders/ over the dates that cover them. The
// listing shows the current device's orders only; an order made through an earlier device
// of the merchant (the merchant connected another one) is found by GET /orders/info alone,
// so the reconciler looks up, a few at a time, the orders the listing leaves out. An order
// the listing returns but the app cannot read is neither: it could not be read, which is
// not "absent from the gateway", and looking it up would meet the same answer. A listing
// that fails (a 500, a timeout) says nothing of the orders, and GET /orders/info may still
// answer: the same look-ups are made then, in place of the listing. While the shop holds the
// credentials of a device it replaced, an order the current device's gateway does not know is
// read through that device (orderReaderAccess); once a look-up shows the current device cannot
// see that device's orders (another merchant's), the retired device's own listing is read once,
// in place of two calls per order.
import { err, ok, type Result } from "neverthrow";
import type { CallBudget, ListOrdersRange } from "~/gateway/client";
import type { GatewayError, GatewayErrorKind } from "~/gateway/errors";
import type { GatewayOrder, GatewayOrderListing } from "~/gateway/schemas";
import type { RetiredOrderReader } from "~/shops/gateway-directory.server";
import type { ShopGatewayAccess } from "./deps";

const DAY_MS = 86_400_000;

export interface WantedOrder {
  gatewayOrderId: string;
  createdAt: Date;
}

/** Which wanted orders the listing left out may be read one by one (GET /orders/info). */
export interface OrderLookUps {
  /** Candidates, most urgent first; those the listing returned are skipped. */
  candidates: readonly string[];
  /** At most this many orders looked up by identifier (each one call, two when it is read through the retired device). */
  limit: number;
  /**
   * At most this many when the listing failed and the look-ups stand in for it (the limit
   * otherwise): a listing failing for days must not leave most of a busy shop's orders unread.
   */
  limitWithoutListing?: number;
  /** Asked before each call (a look-up, the retired device's listing): whether the quota can spare it for this order. */
  affordable(gatewayOrderId: string): Promise<boolean>;
}

/** The gateway to read with: an order reader (orderReaderAccess) may hold a retired device besides. */
export type OrderReading = ShopGatewayAccess & { retired?: RetiredOrderReader | null };

export interface WantedOrdersRead {
  /** The wanted orders the gateway returned, by identifier. */
  orders: Map<string, GatewayOrder>;
  /** Wanted orders GET /orders/info answered 404 for: the gateway has no such order for this device or its merchant. */
  gone: Set<string>;
  /** Wanted orders the listing, or their look-up, returned in a shape the app cannot read: not read, not gone. */
  unreadable: Set<string>;
  /** Orders looked up by identifier (GET /orders/info) because the listing left them out. */
  lookUps: number;
  /**
   * Calls made through the retired device, counted on its own key: reads by identifier the
   * current device's gateway answered 404 to, and its listing.
   */
  retiredCalls: number;
  /** The retired device's listing, when it was made and failed: its orders were looked up one by one. */
  failedRetiredListing: GatewayError | null;
  /** The look-up the gateway failed; the ones after it were not tried. */
  failedLookUp: { gatewayOrderId: string; error: GatewayError } | null;
  /** The listing's failure, when the candidates were looked up without it: only what they returned was read. */
  failedListing: GatewayError | null;
}

const NO_LOOK_UPS: OrderLookUps = { candidates: [], limit: 0, affordable: () => Promise.resolve(false) };

/**
 * Listing failures after which no order is looked up: the device's key is refused (every read
 * would be), the gateway asked the app to slow down, or the quota has nothing left to spend.
 */
const NO_LOOK_UPS_AFTER: ReadonlySet<GatewayErrorKind> = new Set(["unauthorized", "throttled", "quota_exhausted"]);

export async function readGatewayOrders(
  access: OrderReading,
  wanted: readonly WantedOrder[],
  now: Date,
): Promise<Result<Map<string, GatewayOrder>, GatewayError>> {
  const read = await readWantedOrders(access, wanted, now);
  return read.map((value) => value.orders);
}

/** The wanted orders, and what could be learnt of those the gateway did not return. */
export async function readWantedOrders(
  access: OrderReading,
  wanted: readonly WantedOrder[],
  now: Date,
  lookUps: OrderLookUps = NO_LOOK_UPS,
  /** The read's limits when someone waits on it; the client's own otherwise. */
  budget?: CallBudget,
): Promise<Result<WantedOrdersRead, GatewayError>> {
  const read: WantedOrdersRead = {
    orders: new Map(),
    gone: new Set(),
    unreadable: new Set(),
    lookUps: 0,
    retiredCalls: 0,
    failedRetiredListing: null,
    failedLookUp: null,
    failedListing: null,
  };
  if (wanted.length === 0) return ok(read);
  const retired = access.retired ?? null;
  const fallbacksBefore = retired?.fallbacks ?? 0;
  if (wanted.length === 1) {
    const only = wanted[0]!;
    const info = await access.client.orderInfo(only.gatewayOrderId, budget);
    read.retiredCalls = (retired?.fallbacks ?? 0) - fallbacksBefore;
    if (info.isErr()) {
      if (info.error.kind === "not_found") read.gone.add(only.gatewayOrderId);
      else if (unreadableOrder(info.error)) read.unreadable.add(only.gatewayOrderId);
      else return err(info.error);
      return ok(read);
    }
    read.orders.set(info.value.identifier, info.value);
    return ok(read);
  }
  const earliest = Math.min(...wanted.map((w) => w.createdAt.getTime()));
  // A day of margin on both sides: the gateway dates orders in UTC, ours may straddle midnight.
  const range = { start: new Date(earliest - DAY_MS), end: new Date(now.getTime() + DAY_MS) };
  const listed = await access.client.listOrders(range, budget);
  const ids = new Set(wanted.map((w) => w.gatewayOrderId));
  if (listed.isOk()) keepListed(read, listed.value, ids);
  else if (mayLookUpWithoutListing(listed.error, lookUps, ids)) read.failedListing = listed.error;
  else return err(listed.error);
  await lookUpLeftOut(access, read, ids, lookUps, retired && { reader: retired, fallbacksBefore, range });
  read.retiredCalls += (retired?.fallbacks ?? 0) - fallbacksBefore;
  return ok(read);
}

/**
 * Whether a look-up's answer was the order in a shape the app cannot read (a field of it), as
 * the listing's unreadable ones: a read again would meet the same, unlike a failing gateway.
 */
function unreadableOrder(error: GatewayError): boolean {
  return error.kind === "invalid_response" && error.path.length > 1;
}

/** Keeps the wanted orders of a listing, and notes those it returned in a shape the app cannot read. */
function keepListed(read: WantedOrdersRead, listed: GatewayOrderListing, ids: ReadonlySet<string>): void {
  for (const order of listed.orders) if (ids.has(order.identifier)) read.orders.set(order.identifier, order);
  for (const { identifier } of listed.unreadable) if (identifier !== null && ids.has(identifier) && !read.orders.has(identifier)) read.unreadable.add(identifier);
}

/** Whether the candidates are still worth reading one by one after the listing failed this way. */
function mayLookUpWithoutListing(error: GatewayError, lookUps: OrderLookUps, ids: ReadonlySet<string>): boolean {
  return !NO_LOOK_UPS_AFTER.has(error.kind) && lookUps.limit > 0 && lookUps.candidates.some((id) => ids.has(id));
}

/** The retired device an order reader holds, with what its listing covers. */
interface RetiredListing {
  reader: RetiredOrderReader;
  /** Its reads by identifier before this read began. */
  fallbacksBefore: number;
  range: ListOrdersRange;
}

/**
 * Reads one by one (GET /orders/info) the candidates not read yet, most urgent first, while the
 * limit and the quota allow. Once a look-up was answered through the retired device (the
 * current device's gateway did not know that order), the retired device's listing is read,
 * once, before the next look-up: it shows every wanted order of that device in one call. It is
 * not read before that, so a retired device of the same merchant, whose orders the current
 * device reads by their identifiers, costs nothing more, unless more orders are left out than
 * the look-ups may read: then it is read first, in their place.
 */
async function lookUpLeftOut(access: ShopGatewayAccess, read: WantedOrdersRead, ids: ReadonlySet<string>, lookUps: OrderLookUps, retired: RetiredListing | null): Promise<void> {
  let retiredListed = false;
  const unread = (id: string) => ids.has(id) && !read.orders.has(id) && !read.unreadable.has(id);
  const candidates = new Set(lookUps.candidates);
  /** The retired device's one listing of the pass. */
  const listRetired = async (listing: RetiredListing, retiredAccess: ShopGatewayAccess): Promise<void> => {
    retiredListed = true;
    read.retiredCalls++;
    const listed = await retiredAccess.client.listOrders(listing.range);
    // A listing that fails says nothing of the orders: they are still looked up one by one.
    if (listed.isOk()) keepListed(read, listed.value, ids);
    else read.failedRetiredListing = listed.error;
  };
  // More orders left out of a listing than the look-ups may read: the current device's listing
  // shows all of its own, so they are the retired device's (the same merchant's, which the current
  // device reads by identifier without a fallback), and its one listing shows them all. Read one
  // by one, a few a pass, hundreds of them would not all be read before Shopify's window closes.
  const leftOut = retired && read.failedListing === null ? [...candidates].filter(unread) : [];
  if (retired && leftOut.length > lookUps.limit) {
    const retiredAccess = retired.reader.access();
    if (retiredAccess && (await lookUps.affordable(leftOut[0]!))) await listRetired(retired, retiredAccess);
  }
  const limit = read.failedListing ? Math.max(lookUps.limit, lookUps.limitWithoutListing ?? 0) : lookUps.limit;
  for (const id of candidates) {
    if (read.lookUps >= limit) break;
    if (!unread(id)) continue;
    if (!(await lookUps.affordable(id))) continue;
    // Retired credentials no configured key opens are never listed: their device is not read at all.
    const retiredAccess = retired && !retiredListed && retired.reader.fallbacks > retired.fallbacksBefore ? retired.reader.access() : null;
    if (retired && retiredAccess) {
      await listRetired(retired, retiredAccess);
      if (!unread(id) || !(await lookUps.affordable(id))) continue;
    }
    read.lookUps++;
    const info = await access.client.orderInfo(id);
    if (info.isOk()) {
      read.orders.set(info.value.identifier, info.value);
    } else if (info.error.kind === "not_found") {
      read.gone.add(id);
    } else if (unreadableOrder(info.error)) {
      // The gateway answered, so the other orders are still looked up. This one must not hold
      // them back pass after pass, up to the end of Shopify's window.
      read.unreadable.add(id);
    } else {
      // The gateway is failing: the rest waits for the next pass rather than spend more calls.
      read.failedLookUp = { gatewayOrderId: id, error: info.error };
      break;
    }
  }
}
