// Flow 5: the gateway does not retry webhooks, so open payments are read back. Per shop
// and environment, one GET /orders/ covers every open payment and every payment settled
// from a signed webhook alone (which it verifies), only when one of them is due, at most
// once per LIST_SPACING_MS, and only while the quota keeps room for new orders. Orders the
// listing leaves out (made through an earlier device of the merchant) are looked up one by
// one, a few per pass, before a payment is finalised or flagged for them; so are the due
// ones when the listing alone fails. While the shop keeps the credentials of a device it
// replaced, an order the current device's gateway does not know is read through that device,
// and once one is, that device's own listing covers the rest of its orders in the same pass
// (the current device may not see them at all: a sandbox reconnected is another merchant).
// Payments still open near the end of Shopify's pending window are finalised whether or not
// the gateway can be read then: Shopify's window does not wait, and a payment finalised
// unread is flagged for the merchant to check by hand.
// Rejected payments are watched for a week: crypto sent after an order ended is recorded
// under its final status with no webhook, so only a read shows it, and the merchant is told
// to refund it. Shops are claimed atomically, so several instances can run it at once, and
// one instance reconciles a few shops at a time, so a device that answers slowly or fails
// (each read waits out the client's retries) does not hold up every other shop's pass.
import { randomUUID } from "node:crypto";
import pMap from "p-map";
import type { CallBudget } from "~/gateway/client";
import { QUOTA_RESERVE, type QuotaRemaining } from "~/gateway/quota";
import type { GatewayOrder } from "~/gateway/schemas";
import { whileRenewing } from "~/lib/renewal";
import { orderReaderAccess, type OrderReaderAccess } from "~/shops/gateway-directory.server";
import type { Payment, Shop } from "../../generated/prisma/sqlite/client";
import type { GatewayEnv, PaymentsDeps } from "./deps";
import { enqueue, finalMessageKey } from "./outbox";
import { AWAITING_VERIFICATION, isOpenPaymentState, OPEN_PAYMENT_STATES, paymentsOnCredentials, watchedRejectedPayments } from "./payment-state";
import { PENDING_WINDOW_MS } from "./pending";
import { readWantedOrders, type WantedOrdersRead } from "./read-orders";
import { orderTermsMismatch } from "./order-terms";
import { settleFromGatewayOrder, type SettleResult, type SettleSource } from "./settle-payment";
import { flagColumns, flagEvent, type AttentionFlag } from "./attention-flags";

const LEASE_MS = 60_000;
/**
 * Shops one pass reconciles at once. Each has its own device and quota, so their reads are
 * independent; the bound keeps a pass's database connections and gateway sockets few.
 */
export const SHOP_CONCURRENCY = 4;
export { QUOTA_RESERVE };
/**
 * The least time between two listings of one shop's orders in one environment. Lost
 * webhooks are what listings are for; a shopper who paid is settled on return anyway, so
 * the wait mostly delays the merchant seeing an abandoned order as not paid.
 */
export const LIST_SPACING_MS = 60 * 60_000;
/** A payment settled from a signed webhook alone is verified by a listing within this long. */
export const VERIFY_WITHIN_MS = 60 * 60_000;
/**
 * A payment whose order could not be read to verify it for this long (every read failed, or
 * its order was never listed nor looked up) is flagged for a person, and no longer waits: it
 * would otherwise be asked for at every pass for ever, and keep the credentials it was made on
 * and the shopper's details past their time.
 */
export const VERIFY_GIVE_UP_MS = 7 * 86_400_000;
/** A payment open this long is finalised before Shopify's 3-day pending window closes. */
export const FINALISE_AFTER_MS = PENDING_WINDOW_MS - 3_600_000;
/**
 * Listings for payments at the finalise point skip the hourly spacing and the quota reserve,
 * not this shorter spacing: a gateway that fails or refuses the read is asked again after this
 * long, never every cycle, and a payment reaching the point meanwhile waits for that read.
 */
export const CLOSING_LIST_SPACING_MS = 10 * 60_000;
/** A payment open this long is finalised even when no read of its order could be made for it. */
export const FINALISE_UNREAD_AFTER_MS = FINALISE_AFTER_MS + 3 * CLOSING_LIST_SPACING_MS;
/**
 * Orders looked up by identifier (GET /orders/info) per pass because the listing left them out.
 * Each is a call of the general budget (two when it is read through a retired device, on each
 * device's key); beyond the closing payments' they are made only while the reserve holds, on
 * both devices when a retired one is held. The retired device's listing, made at most once a
 * pass and only after a look-up was answered through it, is asked for the same way.
 */
export const MAX_LOOK_UPS = 5;
/**
 * Orders looked up per pass when the listing failed and the look-ups stand in for it: each only
 * while the reserve holds (beyond MAX_LOOK_UPS for closing payments too), so a listing failing
 * for days still lets hundreds of open payments be read before Shopify's window closes.
 */
export const MAX_LOOK_UPS_WITHOUT_LISTING = 50;
/**
 * A watched rejected payment joins every listing of its shop's orders (no extra call), and
 * makes one due itself only when its order was not read for this long.
 */
export const LATE_PAYMENT_RECHECK_MS = 12 * 3_600_000;
/** A session that never got a gateway order answer is abandoned after this long. */
const ABANDON_STARTED_AFTER_MS = 3_600_000;
/** The app's payment page without a chosen coin is given up after a day, like the gateway's own CA. */
const NO_COIN_CHOSEN_AFTER_MS = 24 * 3_600_000;

/**
 * How long after its last check an open payment is due again. Webhooks settle most
 * payments; this is the safety net for lost ones, so it is sparse: a first look once the
 * shortest expiry window (15 min) has passed, then less and less often.
 */
export function recheckIntervalMs(ageMs: number): number {
  if (ageMs < 60 * 60_000) return 15 * 60_000;
  if (ageMs < 6 * 3_600_000) return 30 * 60_000;
  if (ageMs < 25 * 3_600_000) return 2 * 3_600_000;
  return 6 * 3_600_000;
}

export function isDue(payment: Pick<Payment, "createdAt" | "lastCheckedAt">, now: Date): boolean {
  const age = now.getTime() - payment.createdAt.getTime();
  const last = (payment.lastCheckedAt ?? payment.createdAt).getTime();
  return now.getTime() - last >= recheckIntervalMs(age);
}

/** Whether a payment settled from a signed webhook alone must now be verified by a listing. */
export function isVerificationDue(payment: Pick<Payment, "unverifiedSince">, now: Date): boolean {
  return payment.unverifiedSince !== null && now.getTime() - payment.unverifiedSince.getTime() >= VERIFY_WITHIN_MS;
}

/** Whether a watched rejected payment's order is due to be read again for late crypto. */
export function isLateCheckDue(payment: Pick<Payment, "createdAt" | "lastCheckedAt">, now: Date): boolean {
  return now.getTime() - (payment.lastCheckedAt ?? payment.createdAt).getTime() >= LATE_PAYMENT_RECHECK_MS;
}

export interface ReconcileSummary {
  shops: number;
  gatewayCalls: number;
  settled: number;
  /** Payments settled from a signed webhook alone that a listing checked. */
  verified: number;
  finalised: number;
  skippedForQuota: number;
}

async function claimShop(deps: PaymentsDeps, shopId: string, worker: string, leaseMs: number): Promise<boolean> {
  const now = deps.clock.now();
  const claimed = await deps.db.shop.updateMany({
    where: { id: shopId, OR: [{ reconcileLockedUntil: null }, { reconcileLockedUntil: { lt: now } }] },
    data: { reconcileLockedBy: worker, reconcileLockedUntil: new Date(now.getTime() + leaseMs) },
  });
  return claimed.count === 1;
}

/** Gives up `worker`'s claim on the shop, if it still holds it (a lease that ran out may be another's now). */
async function releaseShop(deps: PaymentsDeps, shopId: string, worker: string): Promise<void> {
  await deps.db.shop.updateMany({ where: { id: shopId, reconcileLockedBy: worker }, data: { reconcileLockedBy: null, reconcileLockedUntil: null } });
}

/** Records when the shop's orders in one environment were listed: the next listing is spaced from it. */
async function markListed(deps: PaymentsDeps, shop: Shop, env: GatewayEnv, at: Date): Promise<void> {
  await deps.db.shop.update({ where: { id: shop.id }, data: env === "live" ? { listedLiveAt: at } : { listedSandboxAt: at } });
}

/**
 * Runs `work` on a claimed shop, renewing the claim every third of its lease while it runs: a
 * shop's pass can outlast one lease (a listing waiting out 429s, a few look-ups), and another
 * instance must not list the same shop's orders meanwhile. A process that dies stops renewing.
 */
function whileShopClaimed<T>(deps: PaymentsDeps, shopId: string, worker: string, leaseMs: number, work: () => Promise<T>): Promise<T> {
  return whileRenewing(
    () => deps.db.shop.updateMany({ where: { id: shopId, reconcileLockedBy: worker }, data: { reconcileLockedUntil: new Date(deps.clock.now().getTime() + leaseMs) } }),
    leaseMs / 3,
    (error) => deps.logger.warn("Could not renew the reconciler's claim on a shop", { shopId, error }),
    work,
  );
}

export async function reconcileOnce(
  deps: PaymentsDeps,
  options: { worker: string; force?: boolean; leaseMs?: number; shopConcurrency?: number; stopping?: () => boolean },
): Promise<ReconcileSummary> {
  const leaseMs = options.leaseMs ?? LEASE_MS;
  const summary: ReconcileSummary = { shops: 0, gatewayCalls: 0, settled: 0, verified: 0, finalised: 0, skippedForQuota: 0 };
  const open = await deps.db.payment.findMany({
    where: paymentsOnCredentials(deps.clock.now()),
    select: { shopId: true },
    distinct: ["shopId"],
  });
  const reconcileShop = async (shopId: string): Promise<void> => {
    // Once the instance is stopping, no more shops are claimed: the shops left are another
    // instance's (or the next start's) at once, not held for a lease after this one exits.
    if (options.stopping?.()) return;
    if (!(await claimShop(deps, shopId, options.worker, leaseMs))) return;
    try {
      await whileShopClaimed(deps, shopId, options.worker, leaseMs, async () => {
        const shop = await deps.db.shop.findUniqueOrThrow({ where: { id: shopId } });
        summary.shops++;
        // One environment failing leaves the other's payments to be reconciled all the same.
        for (const env of ["live", "sandbox"] as const) {
          await reconcileShopEnv(deps, shop, env, summary, options.force ?? false).catch((error: unknown) =>
            deps.logger.error("Reconciliation of a shop failed", { shopId, env, error }),
          );
        }
        await deps.db.shop.update({ where: { id: shopId }, data: { lastReconciledAt: deps.clock.now() } });
      });
    } catch (error) {
      deps.logger.error("Reconciliation of a shop failed", { shopId, error });
    } finally {
      await releaseShop(deps, shopId, options.worker);
    }
  };
  // A claim that cannot be taken or released is logged and ends that shop's pass only.
  await pMap(
    open.map((row) => row.shopId),
    (shopId) => reconcileShop(shopId).catch((error: unknown) => deps.logger.error("The reconciler's claim on a shop could not be taken or released", { shopId, error })),
    { concurrency: options.shopConcurrency ?? SHOP_CONCURRENCY },
  );
  return summary;
}

/** How a shopper's return's read of the shop's orders went. */
export type ReturnListing =
  /** The order was read and recorded, with every other open or unverified payment of the shop: the payment as recorded. */
  | { recorded: Pick<Payment, "state" | "gatewayStatus"> }
  /** Not read: the gateway answered for it (gone, or in a shape the app cannot read). */
  | "unread"
  /** Not read: the listing failed (logged here, with the shop). */
  | "listing_failed"
  /** No read stood in for the order's own: the shop is held by another pass or is not one a shopper can wait on, or the listing left the order out (an earlier device's). */
  | "not_listed";

/**
 * The most open and unverified payments a return's read of the shop settles while the shopper
 * waits; in a shop with more, a return reads its own order and the reconciler lists.
 */
export const RETURN_PASS_MAX_PAYMENTS = 50;

/**
 * A shopper's return that must read its order (nothing the app holds tells where the payment
 * stands) reads the shop's orders in its place, as the reconciler would: one call either way,
 * and every open or unverified payment of the shop is settled or verified from it. Lost
 * webhooks come together more often than not (the gateway was not delivering for a while): the
 * shopper's missing one is a sign of others. Only what a shopper can wait on: the shop claimed
 * at once, no payment of it near the end of Shopify's window (the reconciler finalises those,
 * with its look-ups and retries), at most RETURN_PASS_MAX_PAYMENTS, the shopper's budget (one
 * short attempt), no look-ups, and nothing ended but by what the gateway showed. The
 * reconciler's next listing waits its hour from this one only when this one did all that listing
 * would have: every wanted order read, and no watched rejected payment due its check for late
 * crypto (they are left out of the dates, which they would stretch to a week). A read that fails
 * leaves the reconciler's schedule as it was. The caller makes it for a payment's first return
 * read only: the reads of its reloads are by identifier, whatever became of this one.
 */
export async function readShopOrdersAtReturn(deps: PaymentsDeps, shop: Shop, env: GatewayEnv, orderId: string, budget: CallBudget): Promise<ReturnListing> {
  const worker = `return-${randomUUID()}`;
  if (!(await claimShop(deps, shop.id, worker, LEASE_MS))) return "not_listed";
  try {
    return await readShopAtReturn(deps, shop, env, orderId, budget);
  } finally {
    await releaseShop(deps, shop.id, worker);
  }
}

async function readShopAtReturn(deps: PaymentsDeps, shop: Shop, env: GatewayEnv, orderId: string, budget: CallBudget): Promise<ReturnListing> {
  const now = deps.clock.now();
  const [open, unverified] = await Promise.all([
    deps.db.payment.findMany({ where: { shopId: shop.id, gatewayEnv: env, state: { in: [...OPEN_PAYMENT_STATES] }, gatewayOrderId: { not: null } } }),
    deps.db.payment.findMany({ where: { shopId: shop.id, gatewayEnv: env, ...AWAITING_VERIFICATION, gatewayOrderId: { not: null } } }),
  ]);
  const withOrder = open.filter((p) => p.state !== "started");
  if (!withOrder.some((p) => p.gatewayOrderId === orderId)) return "not_listed";
  if (withOrder.some((p) => ageMs(p, now) > FINALISE_AFTER_MS) || withOrder.length + unverified.length > RETURN_PASS_MAX_PAYMENTS) return "not_listed";
  const gateway = gatewayFor(deps, shop, env);
  if ("cause" in gateway) return "not_listed";
  const { access } = gateway;
  if (!keepsReserve(await access.client.quotaRemaining())) return "not_listed";

  const wanted = [...withOrder, ...unverified].map((p) => ({ gatewayOrderId: p.gatewayOrderId!, createdAt: p.createdAt }));
  const readAt = deps.clock.now();
  const read = await readWantedOrders(access, wanted, now, undefined, budget);
  if (read.isErr()) {
    // Not read by itself now as well: the shopper would wait twice the attempt on a gateway that
    // may be failing, and the next read of this return (a reload) is by identifier.
    deps.logger.warn("The shop's orders could not be read on a shopper's return", { shop: shop.shopDomain, env, kind: read.error.kind });
    return "listing_failed";
  }
  const { orders, gone, unreadable } = read.value;
  let recorded: Pick<Payment, "state" | "gatewayStatus"> | null = null;
  for (const payment of [...withOrder, ...unverified]) {
    const order = orders.get(payment.gatewayOrderId!);
    if (!order) continue;
    const own = payment.gatewayOrderId === orderId;
    const settled = await settleListed(deps, shop, env, payment.id, order, readAt, own ? "return" : "reconcile");
    if (own && settled !== "unrecorded") recorded = settled.payment;
  }
  // A payment awaiting verification whose order came in a shape the app cannot read is flagged
  // for a person, as the reconciler's listing would: this read stands in for that listing.
  for (const payment of unverified.filter((p) => unreadable.has(p.gatewayOrderId!))) {
    await onePayment(deps, { ...payment, shop }, "A payment whose order cannot be read could not be flagged", false, () => flagUnverifiablePayment(deps, payment, now, "unreadable"));
  }
  if (wanted.every((w) => orders.has(w.gatewayOrderId) || unreadable.has(w.gatewayOrderId)) && !(await rejectedCheckDue(deps, shop, env, now))) {
    await markListed(deps, shop, env, now);
  }
  if (recorded) return { recorded };
  return gone.has(orderId) || unreadable.has(orderId) || orders.has(orderId) ? "unread" : "not_listed";
}

/** Whether one of the shop's watched rejected payments is due its check for late crypto. */
async function rejectedCheckDue(deps: PaymentsDeps, shop: Shop, env: GatewayEnv, now: Date): Promise<boolean> {
  const rejected = await deps.db.payment.findMany({ where: { shopId: shop.id, gatewayEnv: env, ...watchedRejectedPayments(now) }, select: { createdAt: true, lastCheckedAt: true } });
  return rejected.some((p) => isLateCheckDue(p, now));
}

async function reconcileShopEnv(deps: PaymentsDeps, shop: Shop, env: GatewayEnv, summary: ReconcileSummary, force: boolean): Promise<void> {
  const now = deps.clock.now();
  const [payments, unverified, rejected] = await Promise.all([
    deps.db.payment.findMany({ where: { shopId: shop.id, gatewayEnv: env, state: { in: [...OPEN_PAYMENT_STATES] } }, include: { shop: true } }),
    deps.db.payment.findMany({ where: { shopId: shop.id, gatewayEnv: env, ...AWAITING_VERIFICATION, gatewayOrderId: { not: null } } }),
    deps.db.payment.findMany({
      where: { shopId: shop.id, gatewayEnv: env, ...watchedRejectedPayments(now) },
      select: { id: true, gatewayOrderId: true, gatewayEditedAt: true, createdAt: true, lastCheckedAt: true, transactions: { select: { txHash: true } } },
    }),
  ]);
  if (payments.length === 0 && unverified.length === 0 && rejected.length === 0) return;

  for (const payment of payments.filter((p) => p.state === "started" && p.responseStatus === null && now.getTime() - p.createdAt.getTime() > ABANDON_STARTED_AFTER_MS)) {
    await onePayment(deps, payment, "An abandoned payment session could not be ended", undefined, () => abandonSession(deps, payment, now));
  }

  // Sent to the app's own page but no coin was ever chosen: nothing can arrive any more.
  for (const payment of payments.filter((p) => p.state === "started" && p.responseStatus === 200 && p.gatewayOrderId === null && now.getTime() - p.createdAt.getTime() > NO_COIN_CHOSEN_AFTER_MS)) {
    // Only if still coin-less when written: a pick may have made its order since the read.
    const finalised = await finaliseStalePayment(
      deps,
      payment,
      now,
      { merchantMessage: "The shopper never chose a coin on the payment page.", attention: null },
      { state: "started", gatewayOrderId: null },
    );
    if (finalised) summary.finalised++;
  }

  const withOrder = payments.filter((p) => p.gatewayOrderId !== null && p.state !== "started");
  // The longest open first: they are looked up first when the listing leaves orders out.
  const closing = withOrder.filter((p) => ageMs(p, now) > FINALISE_AFTER_MS).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  const due =
    force ||
    closing.length > 0 ||
    withOrder.some((p) => isDue(p, now)) ||
    unverified.some((p) => isVerificationDue(p, now)) ||
    rejected.some((p) => isLateCheckDue(p, now));
  if (!due) return;
  const listedAt = env === "live" ? shop.listedLiveAt : shop.listedSandboxAt;
  const spacing = closing.length > 0 ? CLOSING_LIST_SPACING_MS : LIST_SPACING_MS;
  // Payments at the finalise point whose orders could not be read are given until
  // FINALISE_UNREAD_AFTER_MS: a gateway failing once is asked again (CLOSING_LIST_SPACING_MS)
  // before anything is rejected unread.
  const overdue = closing.filter((p) => ageMs(p, now) > FINALISE_UNREAD_AFTER_MS);
  if (!force && listedAt && now.getTime() - listedAt.getTime() < spacing) {
    await finaliseUnread(deps, shop, env, overdue, now, summary, "no read of its order succeeded in time");
    return;
  }
  // Not flagged (the write failed, and is logged): it stays to be verified by the next listing.
  const flagUnverifiable = (payment: Payment, why: UnverifiableWhy) =>
    onePayment(deps, { ...payment, shop }, "A payment whose order cannot be read could not be flagged", false, async () => {
      if (await flagUnverifiablePayment(deps, payment, now, why)) summary.verified++;
      return true;
    });
  const givenUp = (payment: Payment) => now.getTime() - payment.unverifiedSince!.getTime() >= VERIFY_GIVE_UP_MS;
  /** When no read is made: those waiting to be verified for VERIFY_GIVE_UP_MS are flagged. */
  const giveUpUnread = async () => {
    for (const payment of unverified.filter(givenUp)) await flagUnverifiable(payment, "unread");
  };
  const gateway = gatewayFor(deps, shop, env);
  if ("cause" in gateway) {
    // Removed credentials, an uninstall, a key that no longer opens: nothing can be read, and
    // the payments already started are still brought to an end before Shopify's window closes.
    await finaliseUnread(deps, shop, env, closing, now, summary, gateway.cause);
    await giveUpUnread();
    return;
  }
  const { access } = gateway;

  if (closing.length === 0 && !keepsReserve(await access.client.quotaRemaining())) {
    summary.skippedForQuota++;
    await giveUpUnread();
    return;
  }

  const closingOrders = new Set(closing.map((p) => p.gatewayOrderId!));
  const wanted = [...withOrder, ...unverified, ...rejected].map((p) => ({ gatewayOrderId: p.gatewayOrderId!, createdAt: p.createdAt }));
  // Looked up when the listing leaves them out or fails, most urgent first: payments about to
  // be finalised (even out of the reserve: they cannot wait), then payments about to be
  // flagged, then open payments that are due, then rejected payments due a check for late
  // crypto (an earlier device's order is in no listing of the current one).
  const candidates = [
    ...closing,
    ...unverified,
    ...withOrder.filter((p) => !closingOrders.has(p.gatewayOrderId!) && isDue(p, now)),
    ...rejected.filter((p) => isLateCheckDue(p, now)),
  ].map((p) => p.gatewayOrderId!);
  await markListed(deps, shop, env, now);
  // Taken before the listing; the look-ups after it count as asked for then too. That can only
  // make a read look older than it is: one that misses a webhook acted on meanwhile is taken
  // as predating it (the next listing verifies), never as contradicting it.
  const readAt = deps.clock.now();
  // Payments at the finalise point cannot wait: as many calls as MAX_LOOK_UPS and the retired
  // device's listing are made for them out of the reserve, no more.
  let outOfReserve = 0;
  const read = await readWantedOrders(access, wanted, now, {
    candidates,
    limit: MAX_LOOK_UPS,
    limitWithoutListing: MAX_LOOK_UPS_WITHOUT_LISTING,
    affordable: async (id) => {
      if (keepsReserve(await access.client.quotaRemaining())) return true;
      if (!closingOrders.has(id) || outOfReserve > MAX_LOOK_UPS) return false;
      outOfReserve++;
      return true;
    },
  });
  summary.gatewayCalls++;
  if (read.isErr()) {
    deps.logger.warn("Reconciliation read failed", { shop: shop.shopDomain, env, kind: read.error.kind });
    // listedAt was set above, so the next attempt waits CLOSING_LIST_SPACING_MS at least.
    await finaliseUnread(deps, shop, env, overdue, now, summary, read.error.message);
    // The gateway refusing or failing every read for days (a device key disabled, say).
    await giveUpUnread();
    return;
  }
  const { orders, gone, lookUps, retiredCalls, failedLookUp, failedListing, failedRetiredListing } = read.value;
  summary.gatewayCalls += lookUps + retiredCalls;
  if (failedListing) deps.logger.warn("Reconciliation listing failed; orders looked up one by one", { shop: shop.shopDomain, env, kind: failedListing.kind, lookUps });
  if (failedRetiredListing) deps.logger.warn("Reconciliation listing of the retired device failed; its orders looked up one by one", { shop: shop.shopDomain, env, kind: failedRetiredListing.kind });
  if (failedLookUp) deps.logger.warn("Reconciliation look-up failed", { shop: shop.shopDomain, env, kind: failedLookUp.error.kind });
  for (const payment of withOrder) {
    const orderId = payment.gatewayOrderId!;
    const listed = orders.get(orderId);
    let state = payment.state;
    // An order read but not recorded counts as unread: its payment is finalised as unread
    // ones are, once its time is up, rather than left open past Shopify's window.
    let order: typeof listed;
    let unrecorded: GatewayOrder | null = null;
    if (listed) {
      const settled = await settleListed(deps, shop, env, payment.id, listed, readAt);
      if (settled === "unrecorded") unrecorded = listed;
      else {
        order = listed;
        state = settled.payment.state;
        if (settled.payment.state !== payment.state) summary.settled++;
      }
    }
    if (!isOpenPaymentState(state)) continue;
    if (!closingOrders.has(orderId)) {
      // Not found by its identifier either, or returned in a shape the app cannot read (a read
      // again meets the same until the gateway's record changes): checked all the same, so it is
      // read again when next due rather than at every pass until the deadline.
      if (gone.has(orderId) || read.value.unreadable.has(orderId)) {
        await onePayment(deps, payment, "A payment's check could not be recorded", undefined, async () => {
          await deps.db.payment.update({ where: { id: payment.id }, data: { lastCheckedAt: now } });
        });
      }
      continue;
    }
    const current = { ...payment, state };
    let finalised: boolean;
    if (order) {
      const mismatch = orderTermsMismatch(order, payment);
      finalised = await finaliseStalePayment(deps, current, now, mismatch ? orderOfOtherTerms(order, mismatch) : undefined);
    }
    else if (gone.has(orderId)) finalised = await finaliseStalePayment(deps, current, now, GONE_ORDER);
    else if (ageMs(payment, now) > FINALISE_UNREAD_AFTER_MS) {
      finalised = await finaliseStalePayment(deps, current, now, unrecorded ? unrecordedOrder(unrecorded) : unreadOrder(unreadCause(orderId, read.value)));
    }
    // Left out of the listing (or the listing failed), or its look-up failed: the next pass looks it up.
    else continue;
    if (finalised) summary.finalised++;
  }
  for (const payment of unverified) {
    const orderId = payment.gatewayOrderId!;
    const order = orders.get(orderId);
    if (order) {
      // Not recorded: it stays to be verified by the next listing.
      if ((await settleListed(deps, shop, env, payment.id, order, readAt)) === "unrecorded") continue;
    } else if (gone.has(orderId) || read.value.unreadable.has(orderId)) {
      // Gone, or returned in a shape the app cannot read (a read again would meet the same): a
      // person must look, and the payment is not read again at every pass for ever (which would
      // also keep the credentials it was made on, and the shopper's details, past their time).
      await flagUnverifiable(payment, gone.has(orderId) ? "gone" : "unreadable");
    } else if (givenUp(payment)) {
      // Never read in all that time (its look-ups failed, or were never made): likewise.
      await flagUnverifiable(payment, "unread");
    }
    // Left out of the listing and not looked up this pass: it stays to be verified by the next.
    else continue;
    // Counted where flagged, and only when written.
    if (order) summary.verified++;
  }
  // Rejected payments are settled again only from news of their order: a new version (its
  // edited_at), or a transaction the app has not stored, which the gateway may list under the
  // final status without a new edited_at (crypto that arrived late is flagged then). Only those
  // whose order was read, proven gone, or returned in a shape the app cannot read (a read again
  // would meet the same) count as checked and wait LATE_PAYMENT_RECHECK_MS: one neither listed
  // nor looked up this pass (an earlier device's order beyond the look-ups' cap or reserve, a
  // failed read) stays due.
  const unrecordedRejected = new Set<string>();
  for (const payment of rejected) {
    const order = orders.get(payment.gatewayOrderId!);
    const known = new Set(payment.transactions.map((t) => t.txHash));
    if (order && (new Date(order.edited_at).getTime() !== payment.gatewayEditedAt?.getTime() || order.transactions.some((t) => !known.has(t.tx_hash)))) {
      if ((await settleListed(deps, shop, env, payment.id, order, readAt)) === "unrecorded") unrecordedRejected.add(payment.id);
    }
  }
  // One whose order could not be recorded stays due, as one not read.
  const checked = rejected.filter((p) => !unrecordedRejected.has(p.id) && [orders, gone, read.value.unreadable].some((seen) => seen.has(p.gatewayOrderId!)));
  if (checked.length > 0) await deps.db.payment.updateMany({ where: { id: { in: checked.map((p) => p.id) }, state: "failed" }, data: { lastCheckedAt: now } });
}

/**
 * Settles a payment from its order as read, or says why it could not be (a write the database
 * refused, a row that kept changing): logged, and the shop's pass goes on with its other
 * payments, which one order must not hold back.
 */
async function settleListed(
  deps: PaymentsDeps,
  shop: Shop,
  env: GatewayEnv,
  paymentId: string,
  order: GatewayOrder,
  readAt: Date,
  source: SettleSource = "reconcile",
): Promise<SettleResult | "unrecorded"> {
  return onePayment<SettleResult | "unrecorded">(deps, { id: paymentId, gatewayEnv: env, shop }, "A gateway order read by the reconciler could not be recorded", "unrecorded", () =>
    settleFromGatewayOrder(deps, paymentId, order, source, readAt),
  );
}

/**
 * One payment's write that fails (a value the column refuses, a lock not granted in time, a
 * dropped connection) is logged with the payment and answered `skipped`, which leaves the
 * payment as it was, for the next pass: the shop's other payments in this pass are not held
 * back by it.
 */
async function onePayment<T>(
  deps: PaymentsDeps,
  payment: { id: string; gatewayEnv: string; shop: Pick<Shop, "shopDomain"> },
  message: string,
  skipped: T,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    deps.logger.error(message, { shop: payment.shop.shopDomain, env: payment.gatewayEnv, paymentId: payment.id, error });
    return skipped;
  }
}

/** Why a closing payment's order was not read: its own failed look-up, else the failed listing. */
function unreadCause(orderId: string, read: Pick<WantedOrdersRead, "failedLookUp" | "failedListing" | "unreadable">): string {
  if (read.failedLookUp?.gatewayOrderId === orderId) return read.failedLookUp.error.message;
  if (read.unreadable.has(orderId)) return "the gateway's answer for this order could not be read";
  return read.failedListing?.message ?? "no read of its order succeeded in time";
}

function ageMs(payment: Pick<Payment, "createdAt">, now: Date): number {
  return now.getTime() - payment.createdAt.getTime();
}

/** Whether the device's quota still holds the reserve kept for new orders. */
export function keepsReserve(quota: QuotaRemaining): boolean {
  return quota.general.minute >= QUOTA_RESERVE.minute && quota.general.day >= QUOTA_RESERVE.day;
}

/**
 * The shop's gateway for one environment, or why there is none to read: its credentials, or
 * those the merchant removed while payments on them were in progress (kept for reads alone),
 * or both when the merchant replaced a device while payments on it were followed.
 */
function gatewayFor(deps: PaymentsDeps, shop: Shop, env: GatewayEnv): { access: OrderReaderAccess } | { cause: string } {
  try {
    const access = orderReaderAccess(deps.gateways, shop, env);
    return access ? { access } : { cause: "the shop has no gateway credentials for this environment any more" };
  } catch (error) {
    deps.logger.error("Stored gateway credentials could not be used", { shop: shop.shopDomain, env, error });
    return { cause: "the shop's stored gateway credentials could not be decrypted or used" };
  }
}

/** What a repeat of an abandoned session's request is answered: Shopify has long stopped retrying it, and the buyer starts again from checkout. */
export const ABANDONED_SESSION_ANSWER = {
  status: 422,
  body: { error: "session_abandoned", message: "This payment session was not completed in time; start the payment again from checkout." },
} as const;

/**
 * Ends a session that never got an answer, only while it still has none and no attempt holds
 * it (one may be creating its order right now): the answer stored with it is what a repeat
 * of the request gets, so nothing creates an order for it any more.
 */
async function abandonSession(deps: PaymentsDeps, payment: Pick<Payment, "id">, now: Date): Promise<void> {
  await deps.db.$transaction(async (tx) => {
    const ended = await tx.payment.updateMany({
      where: { id: payment.id, state: "started", responseStatus: null, OR: [{ sessionClaimUntil: null }, { sessionClaimUntil: { lt: now } }] },
      data: { state: "not_started", responseStatus: ABANDONED_SESSION_ANSWER.status, responseBody: JSON.stringify(ABANDONED_SESSION_ANSWER.body), sessionClaimToken: null, sessionClaimUntil: null },
    });
    if (ended.count !== 1) return;
    await tx.paymentEvent.create({ data: { paymentId: payment.id, type: "abandoned", detail: JSON.stringify({ reason: "no gateway order was confirmed and Shopify stopped retrying" }), at: now } });
  });
}

/** Finalises payments at the end of the pending window whose orders could not be read: flagged, so a person checks them. */
async function finaliseUnread(
  deps: PaymentsDeps,
  shop: Shop,
  env: GatewayEnv,
  payments: readonly (Payment & { shop: Shop })[],
  now: Date,
  summary: ReconcileSummary,
  cause: string,
): Promise<void> {
  for (const payment of payments) {
    if (!(await finaliseStalePayment(deps, payment, now, unreadOrder(cause)))) continue;
    summary.finalised++;
    deps.logger.warn("Payment finalised without a gateway read", { shop: shop.shopDomain, env, paymentId: payment.id, cause });
  }
}

/** The order a signed webhook settled cannot be verified: the gateway no longer has it, or its record cannot be read. A person must look. */
/** Why a payment settled from a signed webhook could not be verified. */
type UnverifiableWhy = "gone" | "unreadable" | "unread";

const UNVERIFIABLE_BECAUSE: Record<UnverifiableWhy, string> = {
  gone: "the gateway does not return this order any more",
  unreadable: "the gateway's record of this order is in a shape the app cannot read, so the status could not be verified",
  unread: `no read of this order has verified it in ${VERIFY_GIVE_UP_MS / 86_400_000} days (the gateway failed or refused the reads, or they could not be made), so the status could not be verified`,
};

/**
 * Flags a payment settled from a signed webhook whose order could not be verified; whether it
 * was written: not when the payment changed meanwhile (a read verified it, or another
 * webhook's settlement restarted its wait), which the flag would overwrite.
 */
async function flagUnverifiablePayment(deps: PaymentsDeps, payment: Payment, now: Date, why: UnverifiableWhy): Promise<boolean> {
  const because = UNVERIFIABLE_BECAUSE[why];
  const flag: AttentionFlag = {
    reason: "webhook_mismatch",
    detail: `A signed gateway webhook reported status ${payment.gatewayStatus ?? "(none)"}, but ${because}. Check it in the gateway dashboard before shipping or refunding.`,
  };
  return deps.db.$transaction(async (tx) => {
    const written = await tx.payment.updateMany({ where: { id: payment.id, unverifiedSince: payment.unverifiedSince }, data: { unverifiedSince: null, ...flagColumns(flag) } });
    if (written.count === 0) return false;
    await tx.paymentEvent.create({ data: { paymentId: payment.id, ...flagEvent(flag, now) } });
    return true;
  });
}

interface FinaliseReason {
  merchantMessage: string;
  attention: "pending_window_expired" | null;
  /** What the merchant is told when flagged; by default, that the gateway had not completed the payment. */
  detail?: string;
}

const PENDING_WINDOW_CLOSED = "The crypto payment was not completed within Shopify's pending window.";

/** The gateway no longer returns the order, by the listing or by its identifier. */
const GONE_ORDER: FinaliseReason = {
  merchantMessage: PENDING_WINDOW_CLOSED,
  attention: "pending_window_expired",
  detail:
    "The gateway no longer returns this order (neither in the device's listing nor by its identifier) and Shopify's 3-day pending window was closing, so the payment was marked as not paid. Check the order in the gateway dashboard; any crypto received must be refunded there.",
};

/**
 * A payment whose order is for other terms than its own (order-terms), which was never marked
 * paid on it, at the end of Shopify's window: the order may well be paid, so the merchant is
 * told what differs and that any crypto on it is the shopper's.
 */
function orderOfOtherTerms(order: GatewayOrder, mismatch: string): FinaliseReason {
  return {
    merchantMessage: PENDING_WINDOW_CLOSED,
    attention: "pending_window_expired",
    detail: `${mismatch} The app never marked the payment paid on that order (gateway status ${order.status.code}), and Shopify's 3-day pending window was closing, so the payment was marked as not paid. Any crypto received on the order is the shopper's: refund it from the gateway dashboard, or arrange the order with the shopper.`,
  };
}

/** A payment whose order was read, but could not be recorded, until Shopify's window was about to close. */
function unrecordedOrder(order: GatewayOrder): FinaliseReason {
  return {
    merchantMessage: PENDING_WINDOW_CLOSED,
    attention: "pending_window_expired",
    detail: `The gateway's order showed status ${order.status.code}, but the app could not record what it read (its log says why), so the payment was marked as not paid before Shopify's 3-day pending window closed. Check the order in the gateway dashboard: if the shopper paid, refund the crypto there or arrange the order with them.`,
  };
}

function unreadOrder(cause: string): FinaliseReason {
  return {
    merchantMessage: PENDING_WINDOW_CLOSED,
    attention: "pending_window_expired",
    detail: `The gateway could not be read before Shopify's 3-day pending window closed: ${cause}. The payment was marked as not paid without its order being checked. Check the order in the gateway dashboard: if the shopper paid, refund the crypto there or arrange the order with them.`,
  };
}

/**
 * Shopify's pending window is about to close while the gateway has not finished: reject and
 * flag. Through the outbox under the payment's one final-message key, and only while the
 * payment is still open, so a settlement that got there first is never contradicted.
 * `still`: what the payment must still be when written instead of merely open (a payment
 * finalised for having no coin must not have had one picked since it was read).
 * Whether this call finalised it.
 */
async function finaliseStalePayment(
  deps: PaymentsDeps,
  payment: Payment & { shop: Shop },
  now: Date,
  reason: FinaliseReason = {
    merchantMessage: PENDING_WINDOW_CLOSED,
    attention: "pending_window_expired",
  },
  still: { state: "started"; gatewayOrderId: null } | null = null,
): Promise<boolean> {
  const flag: AttentionFlag | null = reason.attention && {
    reason: reason.attention,
    detail:
      reason.detail ??
      "The gateway had not completed this payment before Shopify's 3-day pending window closed. Check the order in the gateway dashboard; any crypto received must be refunded there.",
  };
  const finalise = (): Promise<boolean> =>
    deps.db.$transaction(async (tx) => {
      const moved = await tx.payment.updateMany({
        where: still ? { id: payment.id, ...still } : { id: payment.id, state: { in: [...OPEN_PAYMENT_STATES] } },
        data: {
          state: "failed",
          ...(flag ? flagColumns(flag) : {}),
        },
      });
      if (moved.count !== 1) return false;
      await tx.paymentEvent.create({ data: { paymentId: payment.id, type: "state", detail: JSON.stringify({ from: payment.state, to: "failed", source: "pending_window" }), at: now } });
      if (flag) await tx.paymentEvent.create({ data: { paymentId: payment.id, ...flagEvent(flag, now) } });
      await enqueue(tx, {
        shopDomain: payment.shop.shopDomain,
        paymentId: payment.id,
        dedupeKey: finalMessageKey(payment.id),
        payload: { kind: "payment.reject", gid: payment.gid, code: reason.attention ? "PROCESSING_ERROR" : "CANCELLED_PAYMENT", merchantMessage: reason.merchantMessage },
        now,
      });
      return true;
    });
  const finalised = await onePayment(deps, payment, "A payment at the end of Shopify's pending window could not be finalised", false, finalise);
  if (finalised) deps.notify?.outbox();
  return finalised;
}
