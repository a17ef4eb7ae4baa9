// Flow 3: the shopper comes back from the gateway (url_ok, url_ko, url_standby). The order
// is read, settled if that has not happened yet, and the shopper is sent where Shopify
// says (nextAction), or to cancel_url when they gave up before paying.
import type { GatewayEnv, PaymentsDeps } from "./deps";
import { SHOPPER_WAITING_READ } from "./check-payment";
import { deliverNow, finalMessageKey } from "./outbox";
import { enqueuePending } from "./pending";
import { settleFromGatewayOrder } from "./settle-payment";
import { orderReader } from "~/shops/gateway-directory.server";

export type ReturnOutcome = "ok" | "ko" | "standby";
export type ReturnResult =
  | { kind: "redirect"; url: string }
  /** Shopify could not be told yet: show a page, in the payment's locale, that checks again shortly. */
  | { kind: "wait"; retryAfterSeconds: number; locale: string | null }
  | { kind: "not_found" };

/** How long a return waits for a call another worker is delivering, before showing the waiting page. */
const DELIVERY_WAIT_MS = 3_000;

async function nextActionFor(deps: PaymentsDeps, paying: { id: string; merchantLocale: string | null }, messageId: string | undefined): Promise<ReturnResult> {
  // Not delivered here because a background worker claimed the call first and is delivering it
  // right now (not because it waits out a backoff): its answer is moments away.
  const delivering = messageId !== undefined && (await deliverNow(deps, messageId)) === "in_flight";
  const waitUntil = Date.now() + (delivering ? DELIVERY_WAIT_MS : 0);
  for (;;) {
    const payment = await deps.db.payment.findUnique({ where: { id: paying.id }, select: { nextActionUrl: true } });
    if (payment?.nextActionUrl) return { kind: "redirect", url: payment.nextActionUrl };
    if (Date.now() >= waitUntil) return { kind: "wait", retryAfterSeconds: 3, locale: paying.merchantLocale };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * A shopper's return reads the order at most this often per payment: the first return reads
 * at once, and a link opened again and again (the waiting page reloads, a bot) spends no more
 * of the device's quota, which new orders need too.
 */
export const RETURN_READ_SPACING_MS = 10_000;

/** Whether this return may read the order now: claimed atomically, so concurrent returns and instances make one read. */
async function claimReturnRead(deps: PaymentsDeps, paymentId: string): Promise<boolean> {
  const now = deps.clock.now();
  const claimed = await deps.db.payment.updateMany({
    where: { id: paymentId, OR: [{ returnReadAt: null }, { returnReadAt: { lt: new Date(now.getTime() - RETURN_READ_SPACING_MS) } }] },
    data: { returnReadAt: now },
  });
  return claimed.count === 1;
}

export async function handleShopperReturn(deps: PaymentsDeps, input: { paymentId: string; signature: string; outcome: ReturnOutcome }): Promise<ReturnResult> {
  const payment = await deps.db.payment.findUnique({ where: { id: input.paymentId }, include: { shop: true } });
  // The signature binds the link to this payment and its shop: no other payment can be settled with it.
  if (!payment || !deps.links.verify(payment, input.signature)) return { kind: "not_found" };

  const finalMessage = () => deps.db.outboxMessage.findUnique({ where: { dedupeKey: finalMessageKey(payment.id) } });
  if (payment.state === "not_started") return { kind: "redirect", url: payment.cancelUrl };
  if (payment.shopifyOutcome === "resolved" || payment.shopifyOutcome === "rejected") {
    if (payment.nextActionUrl) return { kind: "redirect", url: payment.nextActionUrl };
  }
  if (!payment.gatewayOrderId) return { kind: "redirect", url: payment.cancelUrl };

  let state = payment.state;
  let gatewayStatus = payment.gatewayStatus;
  // Credentials the app cannot read leave the order unread: the shopper is sent on from what is stored.
  const gateway = orderReader(deps.gateways, payment.shop, payment.gatewayEnv as GatewayEnv);
  const access = gateway.state === "connected" ? gateway.access : null;
  if (access && state !== "paid" && state !== "failed" && (await claimReturnRead(deps, payment.id))) {
    const readAt = deps.clock.now();
    const read = await access.client.orderInfo(payment.gatewayOrderId, SHOPPER_WAITING_READ);
    if (read.isOk()) {
      const settled = await settleFromGatewayOrder(deps, payment.id, read.value, "return", readAt);
      state = settled.payment.state;
      gatewayStatus = settled.payment.gatewayStatus;
    } else {
      deps.logger.warn("Order read failed on the shopper's return", { paymentId: payment.id, kind: read.error.kind });
    }
  }

  if (state === "paid" || state === "failed") return nextActionFor(deps, payment, (await finalMessage())?.id);
  // Sent back without paying, or back before even choosing a coin (NR: nothing is under way,
  // so Shopify is not told "pending"): Shopify lets the shopper choose again.
  if (state === "awaiting_payment" && (input.outcome === "ko" || gatewayStatus === "NR")) {
    await deps.db.paymentEvent.create({ data: { paymentId: payment.id, type: "shopper_abandoned", at: deps.clock.now() } });
    return { kind: "redirect", url: payment.cancelUrl };
  }
  if (state === "started") return { kind: "redirect", url: payment.cancelUrl };
  const reason = state === "confirming" ? "NETWORK_ACTION_REQUIRED" : "BUYER_ACTION_REQUIRED";
  const pending = await enqueuePending(deps, payment, reason);
  return nextActionFor(deps, payment, pending.id);
}
