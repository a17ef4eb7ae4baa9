// Reads gateway orders authoritatively with as few calls as the quota deserves: one order
// by GET /orders/info, several by one GET /orders/ over the dates that cover them. The
// listing shows the current device's orders only; an order made through an earlier device
// of the merchant (the merchant connected another one) is found by GET /orders/info alone,
// so the reconciler looks up, a few at a time, the orders the listing leaves out. An order
// the listing returns but the app cannot read is neither: it could not be read, which is
// not "absent from the gateway", and looking it up would meet the same answer. A listing
// that fails (a 500, a timeout) says nothing of the orders, and GET /orders/info may still
// answer: the same look-ups are made then, in place of the listing.
import { err, ok, type Result } from "neverthrow";
import type { GatewayError, GatewayErrorKind } from "~/gateway/errors";
import type { GatewayOrder, GatewayOrderListing } from "~/gateway/schemas";
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
  /** At most this many GET /orders/info calls. */
  limit: number;
  /** Asked before each call: whether the quota can spare it for this order. */
  affordable(gatewayOrderId: string): Promise<boolean>;
}

export interface WantedOrdersRead {
  /** The wanted orders the gateway returned, by identifier. */
  orders: Map<string, GatewayOrder>;
  /** Wanted orders GET /orders/info answered 404 for: the gateway has no such order for this device or its merchant. */
  gone: Set<string>;
  /** Wanted orders the listing returned in a shape the app cannot read: not read, not gone, not looked up. */
  unreadable: Set<string>;
  /** GET /orders/info calls made for orders the listing left out. */
  lookUps: number;
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
  access: ShopGatewayAccess,
  wanted: readonly WantedOrder[],
  now: Date,
): Promise<Result<Map<string, GatewayOrder>, GatewayError>> {
  const read = await readWantedOrders(access, wanted, now);
  return read.map((value) => value.orders);
}

/** The wanted orders, and what could be learnt of those the gateway did not return. */
export async function readWantedOrders(
  access: ShopGatewayAccess,
  wanted: readonly WantedOrder[],
  now: Date,
  lookUps: OrderLookUps = NO_LOOK_UPS,
): Promise<Result<WantedOrdersRead, GatewayError>> {
  const read: WantedOrdersRead = { orders: new Map(), gone: new Set(), unreadable: new Set(), lookUps: 0, failedLookUp: null, failedListing: null };
  if (wanted.length === 0) return ok(read);
  if (wanted.length === 1) {
    const only = wanted[0]!;
    const info = await access.client.orderInfo(only.gatewayOrderId);
    if (info.isErr()) {
      if (info.error.kind !== "not_found") return err(info.error);
      read.gone.add(only.gatewayOrderId);
      return ok(read);
    }
    read.orders.set(info.value.identifier, info.value);
    return ok(read);
  }
  const earliest = Math.min(...wanted.map((w) => w.createdAt.getTime()));
  // A day of margin on both sides: the gateway dates orders in UTC, ours may straddle midnight.
  const listed = await access.client.listOrders({ start: new Date(earliest - DAY_MS), end: new Date(now.getTime() + DAY_MS) });
  const ids = new Set(wanted.map((w) => w.gatewayOrderId));
  if (listed.isOk()) keepListed(read, listed.value, ids);
  else if (mayLookUpWithoutListing(listed.error, lookUps, ids)) read.failedListing = listed.error;
  else return err(listed.error);
  await lookUpLeftOut(access, read, ids, lookUps);
  return ok(read);
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

/** Reads one by one (GET /orders/info) the candidates not read yet, most urgent first, while the limit and the quota allow. */
async function lookUpLeftOut(access: ShopGatewayAccess, read: WantedOrdersRead, ids: ReadonlySet<string>, lookUps: OrderLookUps): Promise<void> {
  for (const id of new Set(lookUps.candidates)) {
    if (read.lookUps >= lookUps.limit) break;
    if (!ids.has(id) || read.orders.has(id) || read.unreadable.has(id)) continue;
    if (!(await lookUps.affordable(id))) continue;
    read.lookUps++;
    const info = await access.client.orderInfo(id);
    if (info.isOk()) {
      read.orders.set(info.value.identifier, info.value);
    } else if (info.error.kind === "not_found") {
      read.gone.add(id);
    } else {
      // The gateway is failing: the rest waits for the next pass rather than spend more calls.
      read.failedLookUp = { gatewayOrderId: id, error: info.error };
      break;
    }
  }
}
