// "Check now": reads one payment's order from the gateway at once, settles it and
// delivers any Shopify call it produced. Used by the admin and the app's payment page.
import type { CallBudget } from "~/gateway/client";
import type { GatewayEnv, PaymentsDeps } from "./deps";
import { deliverNow, retryFinalCallNow, type DeliveryResult } from "./outbox";
import { settleFromGatewayOrder } from "./settle-payment";
import { orderReader } from "~/shops/gateway-directory.server";

/** How a delivery of the payment's final Shopify call went. */
export type ShopifyDelivery = DeliveryResult | "in_flight" | "held";

export type CheckResult =
  | {
      ok: true;
      /** "now": the order was read; "spaced": it was read (or a read began) within the spacing asked for, so it was not read again. */
      read: "now" | "spaced";
      state: string;
      gatewayStatus: string | null;
      /** The payment's final Shopify call, when one was still to deliver: how its delivery went. */
      shopify: ShopifyDelivery | null;
    }
  | { ok: false; reason: "not_found" | "no_order" | "no_credentials" | "gateway_error"; message: string };

/**
 * A read a shopper waits on (their payment page, their return from the gateway): one attempt,
 * of 3 s at most, and no wait for a quota slot. A page that cannot read the order shows what is
 * stored and follows the payment; the reconciler reads it later. The client's own budget
 * (five attempts, up to 30 s) held a shopper's page for that long when the gateway was slow.
 */
export const SHOPPER_WAITING_READ: CallBudget = { timeoutMs: 3_000, retry: { maxAttempts: 1 }, quotaMaxWaitMs: 0 };

/**
 * The merchant's Check now reads a payment's order at most this often: each press is a call
 * out of the device's quota, which new orders share (a merchant pressing again and again, or
 * several staff on one payment, would otherwise spend it). A read the shopper's page, a return
 * or the reconciler made as recently counts too: its answer is what the merchant sees.
 */
export const MERCHANT_CHECK_SPACING_MS = 5_000;

/**
 * Claims a read of the payment's order for someone waiting (the payment page, the merchant's
 * Check now): granted when no read answered and none was begun in the last `spacingMs`. One
 * conditional update, so concurrent pages, presses and instances make one read. It marks
 * readClaimedAt, never lastCheckedAt: a read that then fails leaves the order unread for the
 * reconciler, which spaces its own reads on lastCheckedAt.
 */
export async function claimRead(db: PaymentsDeps["db"], paymentId: string, now: Date, spacingMs: number): Promise<boolean> {
  const before = new Date(now.getTime() - spacingMs);
  const claimed = await db.payment.updateMany({
    where: {
      id: paymentId,
      AND: [{ OR: [{ readClaimedAt: null }, { readClaimedAt: { lt: before } }] }, { OR: [{ lastCheckedAt: null }, { lastCheckedAt: { lt: before } }] }],
    },
    data: { readClaimedAt: now },
  });
  return claimed.count === 1;
}

/**
 * `budget`: the read's limits when someone waits on it (SHOPPER_WAITING_READ); the client's own
 * otherwise.
 *
 * `retryShopify`: the merchant's check also sends the payment's final Shopify call at once when
 * it waits out a backoff, and then its answers to refunds, captures and voids still waiting (the
 * flag of a refused call tells them to press Check now once the cause is mended). The
 * shopper's page never does: its polls must not hurry Shopify calls.
 *
 * `spacedMs`: the order is not read again when it was read less than this long ago, or a read
 * was begun (claimRead); the Shopify calls are still sent as `retryShopify` says.
 */
export async function checkPaymentNow(
  deps: PaymentsDeps,
  shopId: string,
  paymentId: string,
  options: { retryShopify?: boolean; budget?: CallBudget; spacedMs?: number } = {},
): Promise<CheckResult> {
  const payment = await deps.db.payment.findFirst({ where: { id: paymentId, shopId }, include: { shop: true } });
  if (!payment) return { ok: false, reason: "not_found", message: "No such payment in this shop." };
  if (!payment.gatewayOrderId) return { ok: false, reason: "no_order", message: "This payment has no gateway order yet." };
  const gateway = orderReader(deps.gateways, payment.shop, payment.gatewayEnv as GatewayEnv);
  if (gateway.state === "not_connected") return { ok: false, reason: "no_credentials", message: "The shop has no gateway credentials for this payment's environment." };
  if (gateway.state === "unreadable") return { ok: false, reason: "no_credentials", message: "The stored gateway credentials for this payment's environment cannot be read: connect the device again." };
  const { access } = gateway;
  const readAt = deps.clock.now();
  if (options.spacedMs !== undefined) {
    if (!(await claimRead(deps.db, payment.id, readAt, options.spacedMs))) {
      const shopify = options.retryShopify ? await retryFinalCallNow(deps, payment.id) : null;
      const now = await deps.db.payment.findUniqueOrThrow({ where: { id: payment.id }, select: { state: true, gatewayStatus: true } });
      return { ok: true, read: "spaced", state: now.state, gatewayStatus: now.gatewayStatus, shopify };
    }
  }
  const read = await access.client.orderInfo(payment.gatewayOrderId, options.budget);
  if (read.isErr()) return { ok: false, reason: "gateway_error", message: `The gateway could not be read (${read.error.kind}).` };
  const settled = await settleFromGatewayOrder(deps, payment.id, read.value, "check", readAt);
  let shopify: ShopifyDelivery | null = settled.finalMessage ? await deliverNow(deps, settled.finalMessage.id) : null;
  // Not after an attempt just made: only a call this read did not try (it waits out its backoff).
  if (options.retryShopify && (shopify === null || shopify === "skipped")) shopify = (await retryFinalCallNow(deps, payment.id)) ?? shopify;
  return { ok: true, read: "now", state: settled.payment.state, gatewayStatus: settled.payment.gatewayStatus, shopify };
}
