// Flow 3: the shopper comes back from the gateway (url_ok, url_ko, url_standby). The order
// is read, settled if that has not happened yet, and the shopper is sent where Shopify
// says (nextAction), or to cancel_url when they gave up before paying (a ko return, or an
// order this return read as still without a coin). A return to wait (url_standby, where the
// gateway's page sends the shopper once it has seen money) reads nothing when what the app
// learnt in the last minutes shows the shopper chose a coin: Shopify is told the payment is
// pending either way, and the order's signed webhooks and the reconciler settle it. Those
// returns were most of the gateway calls a day makes beyond order creation.
import type { Payment } from "../../generated/prisma/sqlite/client";
import type { GatewayEnv, PaymentsDeps } from "./deps";
import { SHOPPER_WAITING_READ } from "./check-payment";
import { deliverNow, finalMessageKey } from "./outbox";
import { enqueuePending } from "./pending";
import { agreedStatus } from "./process-webhooks";
import { settleFromGatewayOrder } from "./settle-payment";
import type { PendingReason } from "~/shopify/payments-apps/outcome";
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

type Progress = "PE" | "AC";

/**
 * How long what the app holds of an order's progress stands for the order without a read at a
 * return to wait: the gateway's shortest expiry window, within which an order that reached PE
 * cannot have expired. A return to wait comes seconds after the status it follows; a link
 * opened again later reads.
 */
export const HELD_PROGRESS_FRESH_MS = 15 * 60_000;

/**
 * How far the order has gone by what the app holds, without reading it: AC (money seen) or
 * PE (a coin chosen), from the payment's own state and status (a read, or the order's
 * creation with a coin) and from the shop's webhooks of the order, each verified at the door
 * with its Secret Key and agreeing with the payment (order, amount, fiat). With `freshSince`,
 * only what was learnt since then counts. Null when nothing shows the shopper got that far,
 * and when a webhook may say more than a wait: a final or unknown status (the inbox may not
 * have taken it in yet), or one that disagrees.
 */
async function heldProgress(deps: PaymentsDeps, payment: Payment, freshSince: Date | null): Promise<Progress | null> {
  const hooks = await deps.db.gatewayWebhook.findMany({
    where: { shopId: payment.shopId, gatewayEnv: payment.gatewayEnv, orderId: payment.gatewayOrderId },
    select: { rawBody: true, orderId: true, receivedAt: true },
  });
  const fresh = (at: Date) => freshSince === null || at.getTime() >= freshSince.getTime();
  const own = payment.state === "confirming" || payment.gatewayStatus === "AC" ? "AC" : payment.gatewayStatus === "PE" ? "PE" : null;
  let progress: Progress | null = own !== null && fresh(payment.lastCheckedAt ?? payment.createdAt) ? own : null;
  for (const hook of hooks) {
    const status = agreedStatus(hook, payment)?.code;
    if (status === "NR") continue;
    if (status !== "PE" && status !== "AC") return null;
    if (fresh(hook.receivedAt) && (status === "AC" || progress === null)) progress = status;
  }
  return progress;
}

const PENDING_REASON: Record<Progress, PendingReason> = { AC: "NETWORK_ACTION_REQUIRED", PE: "BUYER_ACTION_REQUIRED" };

async function pendingThenNextAction(deps: PaymentsDeps, payment: Payment & { shop: { shopDomain: string } }, reason: PendingReason): Promise<ReturnResult> {
  const pending = await enqueuePending(deps, payment, reason);
  return nextActionFor(deps, payment, pending.id);
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

  if (input.outcome === "standby" && (payment.state === "awaiting_payment" || payment.state === "confirming")) {
    const freshSince = new Date(deps.clock.now().getTime() - HELD_PROGRESS_FRESH_MS);
    const progress = await heldProgress(deps, payment, freshSince);
    if (progress) return pendingThenNextAction(deps, payment, PENDING_REASON[progress]);
  }

  let state = payment.state;
  let gatewayStatus = payment.gatewayStatus;
  let readHere = false;
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
      readHere = true;
    } else {
      deps.logger.warn("Order read failed on the shopper's return", { paymentId: payment.id, kind: read.error.kind });
    }
  }

  if (state === "paid" || state === "failed") return nextActionFor(deps, payment, (await finalMessage())?.id);
  if (state === "started") return { kind: "redirect", url: payment.cancelUrl };
  // Sent back without paying, or back before even choosing a coin (NR: nothing is under way,
  // so Shopify is not told "pending"): Shopify lets the shopper choose again.
  const abandoned = async (): Promise<ReturnResult> => {
    await deps.db.paymentEvent.create({ data: { paymentId: payment.id, type: "shopper_abandoned", at: deps.clock.now() } });
    return { kind: "redirect", url: payment.cancelUrl };
  };
  if (state === "awaiting_payment" && input.outcome === "ko") return abandoned();
  if (state === "awaiting_payment" && gatewayStatus === "NR") {
    // NR as this return read it: the shopper never chose a coin.
    if (readHere) return abandoned();
    // NR only as the order was created: the order was not read here (its read failed, or another
    // return is reading it now), and a shopper sent back as paid or to wait may well have paid.
    // Sending them to choose another payment method could make them pay twice: what the app
    // holds decides, else they wait a moment for the read.
    const progress = await heldProgress(deps, payment, null);
    if (progress) return pendingThenNextAction(deps, payment, PENDING_REASON[progress]);
    if (!access) return abandoned();
    return { kind: "wait", retryAfterSeconds: 3, locale: payment.merchantLocale };
  }
  return pendingThenNextAction(deps, payment, state === "confirming" ? "NETWORK_ACTION_REQUIRED" : "BUYER_ACTION_REQUIRED");
}
