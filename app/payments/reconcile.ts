// Flow 5: the gateway does not retry webhooks, so open payments are read back. Per shop
// and environment, one GET /orders/ covers every open payment and every payment settled
// from a signed webhook alone (which it verifies), only when one of them is due, at most
// once per LIST_SPACING_MS, and only while the quota keeps room for new orders. Payments
// still open near the end of Shopify's pending window are finalised. Shops are claimed
// atomically, so several instances can run it at once.
import type { Payment, Shop } from "../../generated/prisma/sqlite/client";
import type { GatewayEnv, PaymentsDeps } from "./deps";
import { enqueue, finalMessageKey } from "./outbox";
import { isOpenPaymentState, OPEN_PAYMENT_STATES } from "./payment-state";
import { PENDING_WINDOW_MS } from "./pending";
import { readGatewayOrders } from "./read-orders";
import { settleFromGatewayOrder } from "./settle-payment";

const LEASE_MS = 60_000;
/** Calls kept free for new orders (POST /orders/ shares the general budget). */
export const QUOTA_RESERVE = { minute: 20, day: 600 } as const;
/**
 * The least time between two listings of one shop's orders in one environment. Lost
 * webhooks are what listings are for; a shopper who paid is settled on return anyway, so
 * the wait mostly delays the merchant seeing an abandoned order as not paid.
 */
export const LIST_SPACING_MS = 60 * 60_000;
/** A payment settled from a signed webhook alone is verified by a listing within this long. */
export const VERIFY_WITHIN_MS = 60 * 60_000;
/** A payment open this long is finalised before Shopify's 3-day pending window closes. */
const FINALISE_AFTER_MS = PENDING_WINDOW_MS - 3_600_000;
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

export interface ReconcileSummary {
  shops: number;
  gatewayCalls: number;
  settled: number;
  /** Payments settled from a signed webhook alone that a listing checked. */
  verified: number;
  finalised: number;
  skippedForQuota: number;
}

async function claimShop(deps: PaymentsDeps, shopId: string, worker: string): Promise<boolean> {
  const now = deps.clock.now();
  const claimed = await deps.db.shop.updateMany({
    where: { id: shopId, OR: [{ reconcileLockedUntil: null }, { reconcileLockedUntil: { lt: now } }] },
    data: { reconcileLockedBy: worker, reconcileLockedUntil: new Date(now.getTime() + LEASE_MS) },
  });
  return claimed.count === 1;
}

export async function reconcileOnce(deps: PaymentsDeps, options: { worker: string; force?: boolean }): Promise<ReconcileSummary> {
  const summary: ReconcileSummary = { shops: 0, gatewayCalls: 0, settled: 0, verified: 0, finalised: 0, skippedForQuota: 0 };
  const open = await deps.db.payment.findMany({
    where: { OR: [{ state: { in: [...OPEN_PAYMENT_STATES] } }, { unverifiedSince: { not: null } }] },
    select: { shopId: true },
    distinct: ["shopId"],
  });
  for (const { shopId } of open) {
    if (!(await claimShop(deps, shopId, options.worker))) continue;
    try {
      const shop = await deps.db.shop.findUniqueOrThrow({ where: { id: shopId } });
      summary.shops++;
      for (const env of ["live", "sandbox"] as const) await reconcileShopEnv(deps, shop, env, summary, options.force ?? false);
      await deps.db.shop.update({ where: { id: shopId }, data: { lastReconciledAt: deps.clock.now() } });
    } catch (error) {
      deps.logger.error("Reconciliation of a shop failed", { shopId, error });
    } finally {
      await deps.db.shop.updateMany({ where: { id: shopId, reconcileLockedBy: options.worker }, data: { reconcileLockedBy: null, reconcileLockedUntil: null } });
    }
  }
  return summary;
}

async function reconcileShopEnv(deps: PaymentsDeps, shop: Shop, env: GatewayEnv, summary: ReconcileSummary, force: boolean): Promise<void> {
  const now = deps.clock.now();
  const [payments, unverified] = await Promise.all([
    deps.db.payment.findMany({ where: { shopId: shop.id, gatewayEnv: env, state: { in: [...OPEN_PAYMENT_STATES] } }, include: { shop: true } }),
    deps.db.payment.findMany({ where: { shopId: shop.id, gatewayEnv: env, unverifiedSince: { not: null }, gatewayOrderId: { not: null } } }),
  ]);
  if (payments.length === 0 && unverified.length === 0) return;

  for (const payment of payments.filter((p) => p.state === "started" && p.responseStatus === null && now.getTime() - p.createdAt.getTime() > ABANDON_STARTED_AFTER_MS)) {
    await deps.db.payment.update({
      where: { id: payment.id },
      data: { state: "not_started", events: { create: { type: "abandoned", detail: JSON.stringify({ reason: "no gateway order was confirmed and Shopify stopped retrying" }), at: now } } },
    });
  }

  // Sent to the app's own page but no coin was ever chosen: nothing can arrive any more.
  for (const payment of payments.filter((p) => p.state === "started" && p.responseStatus === 200 && p.gatewayOrderId === null && now.getTime() - p.createdAt.getTime() > NO_COIN_CHOSEN_AFTER_MS)) {
    await finaliseStalePayment(deps, payment, now, {
      merchantMessage: "The shopper never chose a coin on the payment page.",
      attention: null,
    });
    summary.finalised++;
  }

  const withOrder = payments.filter((p) => p.gatewayOrderId !== null && p.state !== "started");
  const nearDeadline = withOrder.some((p) => now.getTime() - p.createdAt.getTime() > FINALISE_AFTER_MS);
  const due =
    force ||
    nearDeadline ||
    withOrder.some((p) => isDue(p, now)) ||
    unverified.some((p) => isVerificationDue(p, now));
  if (!due) return;
  const listedAt = env === "live" ? shop.listedLiveAt : shop.listedSandboxAt;
  if (!force && !nearDeadline && listedAt && now.getTime() - listedAt.getTime() < LIST_SPACING_MS) return;
  const access = deps.gateways.forShop(shop, env);
  if (!access) return;

  const quota = await access.client.quotaRemaining();
  if (!nearDeadline && (quota.general.minute < QUOTA_RESERVE.minute || quota.general.day < QUOTA_RESERVE.day)) {
    summary.skippedForQuota++;
    return;
  }

  const wanted = [...withOrder, ...unverified].map((p) => ({ gatewayOrderId: p.gatewayOrderId!, createdAt: p.createdAt }));
  await deps.db.shop.update({ where: { id: shop.id }, data: env === "live" ? { listedLiveAt: now } : { listedSandboxAt: now } });
  const read = await readGatewayOrders(access, wanted, now);
  summary.gatewayCalls++;
  if (read.isErr()) {
    deps.logger.warn("Reconciliation read failed", { shop: shop.shopDomain, env, kind: read.error.kind });
    return;
  }
  for (const payment of withOrder) {
    const order = read.value.get(payment.gatewayOrderId!);
    let state = payment.state;
    if (order) {
      const settled = await settleFromGatewayOrder(deps, payment.id, order, "reconcile");
      state = settled.payment.state;
      if (settled.payment.state !== payment.state) summary.settled++;
    }
    if (isOpenPaymentState(state) && now.getTime() - payment.createdAt.getTime() > FINALISE_AFTER_MS) {
      await finaliseStalePayment(deps, payment, now);
      summary.finalised++;
    }
  }
  for (const payment of unverified) {
    const order = read.value.get(payment.gatewayOrderId!);
    if (order) await settleFromGatewayOrder(deps, payment.id, order, "reconcile");
    else await flagUnlistedPayment(deps, payment, now);
    summary.verified++;
  }
}

/** The gateway no longer has the order a signed webhook settled: a person must look. */
async function flagUnlistedPayment(deps: PaymentsDeps, payment: Payment, now: Date): Promise<void> {
  const detail = `A signed gateway webhook reported status ${payment.gatewayStatus ?? "(none)"}, but the gateway does not return this order any more. Check it in the gateway dashboard before shipping or refunding.`;
  await deps.db.payment.update({
    where: { id: payment.id },
    data: {
      unverifiedSince: null,
      attention: "webhook_mismatch",
      attentionDetail: detail,
      attentionResolvedAt: null,
      events: { create: { type: "attention", detail: JSON.stringify({ reason: "webhook_mismatch", detail }), at: now } },
    },
  });
}

/** Shopify's pending window is about to close while the gateway has not finished: reject and flag. */
async function finaliseStalePayment(
  deps: PaymentsDeps,
  payment: Payment & { shop: Shop },
  now: Date,
  reason: { merchantMessage: string; attention: "pending_window_expired" | null } = {
    merchantMessage: "The crypto payment was not completed within Shopify's pending window.",
    attention: "pending_window_expired",
  },
): Promise<void> {
  await deps.db.$transaction(async (tx) => {
    const moved = await tx.payment.updateMany({
      where: { id: payment.id, state: { in: [...OPEN_PAYMENT_STATES] } },
      data: {
        state: "failed",
        ...(reason.attention
          ? {
              attention: reason.attention,
              attentionDetail: "The gateway had not completed this payment before Shopify's 3-day pending window closed. Check the order in the gateway dashboard; any crypto received must be refunded there.",
              attentionResolvedAt: null,
            }
          : {}),
      },
    });
    if (moved.count !== 1) return;
    await tx.paymentEvent.create({ data: { paymentId: payment.id, type: "state", detail: JSON.stringify({ from: payment.state, to: "failed", source: "pending_window" }), at: now } });
    await enqueue(tx, {
      shopDomain: payment.shop.shopDomain,
      paymentId: payment.id,
      dedupeKey: finalMessageKey(payment.id),
      payload: { kind: "payment.reject", gid: payment.gid, code: reason.attention ? "PROCESSING_ERROR" : "CANCELLED_PAYMENT", merchantMessage: reason.merchantMessage },
      now,
    });
  });
  deps.notify?.outbox();
}
