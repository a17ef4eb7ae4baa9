// Flow 3: the shopper comes back from the gateway (url_ok, url_ko, url_standby). The order
// is read, settled if that has not happened yet, and the shopper is sent where Shopify
// says (nextAction), or to cancel_url when they gave up before paying (a ko return, or an
// order this return read as still without a coin). A return to wait (url_standby, where the
// gateway's page sends the shopper once it has seen money) reads nothing when what the app
// learnt in the last minutes shows the shopper chose a coin: Shopify is told the payment is
// pending either way, and the order's signed webhooks and the reconciler settle it. Those
// returns were most of the gateway calls a day makes beyond order creation.
import type { Payment, Shop } from "../../generated/prisma/sqlite/client";
import { isFinalGatewayStatus, type GatewayStatus } from "~/gateway/statuses";
import type { GatewayEnv, PaymentsDeps, ShopGatewayAccess } from "./deps";
import { SHOPPER_WAITING_READ } from "./check-payment";
import { deliverNow, finalMessageKey } from "./outbox";
import { enqueuePending } from "./pending";
import { isOpenPaymentState, shopifyNextPage } from "./payment-state";
import { agreedStatus } from "./process-webhooks";
import { keepsReserve, readShopOrdersAtReturn } from "./reconcile";
import { decideForGatewayStatus } from "./status-mapping";
import { settleFromGatewayOrder } from "./settle-payment";
import type { PendingReason } from "~/shopify/payments-apps/outcome";
import { orderReader } from "~/shops/gateway-directory.server";

export type ReturnOutcome = "ok" | "ko" | "standby";

/** The timeline event of a shopper sent back to the checkout to choose again (the payment page then sends them there too). */
export const SHOPPER_ABANDONED_EVENT = "shopper_abandoned";
export type ReturnResult =
  | { kind: "redirect"; url: string }
  /** Shopify could not be told yet: show a page, in the payment's locale, that checks again shortly. */
  | { kind: "wait"; retryAfterSeconds: number; locale: string | null }
  /**
   * Paid, but Shopify refused to take the outcome (the merchant's flag says why): no order page
   * follows until the merchant sees to it. The shopper is told the payment was received and
   * not to pay again; the page still checks now and then, for when the merchant has.
   */
  | { kind: "shop_notified"; retryAfterSeconds: number; locale: string | null }
  /**
   * The shop uninstalled the app: Shopify can no longer be told of the payment (its token and
   * gateway credentials are gone), so no page that waits would ever move on. The shopper is told
   * to send nothing, and to ask the shop about anything already sent.
   */
  | { kind: "shop_gone"; locale: string | null }
  | { kind: "not_found" };

/** How often the page of a paid payment whose outcome Shopify refused checks again. */
const SHOP_NOTIFIED_RECHECK_SECONDS = 60;

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
 * How long what the app learnt of an order's progress (the payment's own last read, or a
 * webhook's arrival) stands for the order without a read at a return to wait. An order at PE
 * expires 15 minutes at the soonest after its coin was fixed; the window leaves 5 of them for
 * the webhook's way and the clocks, and a PE whose stored expiry is that close counts for
 * nothing. A return to wait comes seconds after the status it follows; a link opened again
 * later reads.
 */
export const HELD_PROGRESS_FRESH_MS = 10 * 60_000;
/** A PE whose stored expiry is this close, or past, may be an EX whose webhook was lost. */
const EXPIRY_MARGIN_MS = 5 * 60_000;

/** What the app holds of the order, without reading it. */
type Held =
  /** AC (money seen) or PE (a coin chosen) as the latest the app knows of the order. */
  | { kind: "progress"; progress: Progress }
  /** A final status of a verified webhook the payment has not taken in yet (the inbox's turn may not have come). */
  | { kind: "final"; status: GatewayStatus }
  /** A webhook of the order the app cannot take at its word: an unknown status, or one that disagrees with the payment. */
  | { kind: "unclear" }
  /** Nothing shows the shopper chose a coin. */
  | { kind: "nothing" };

/**
 * How far the order has gone by what the app holds: the payment's own state and status (a
 * read, or the order's creation with a coin), and the shop's webhooks of the order, each
 * verified at the door with its Secret Key and agreeing with the payment (order, amount,
 * fiat). With `fresh`, progress counts only if learnt in the last HELD_PROGRESS_FRESH_MS, and a
 * PE only while its stored expiry is not close. A final, unknown or disagreeing webhook says
 * more than progress, whatever its age.
 */
async function heldState(deps: PaymentsDeps, payment: Payment, fresh: boolean): Promise<Held> {
  const hooks = await deps.db.gatewayWebhook.findMany({
    where: { shopId: payment.shopId, gatewayEnv: payment.gatewayEnv, orderId: payment.gatewayOrderId },
    select: { rawBody: true, orderId: true, receivedAt: true },
    orderBy: { receivedAt: "asc" },
  });
  const now = deps.clock.now().getTime();
  const counts = (progress: Progress, learntAt: Date) => {
    if (!fresh) return true;
    if (now - learntAt.getTime() >= HELD_PROGRESS_FRESH_MS) return false;
    return progress === "AC" || payment.expiresAt === null || payment.expiresAt.getTime() - now > EXPIRY_MARGIN_MS;
  };
  const own = payment.state === "confirming" || payment.gatewayStatus === "AC" ? "AC" : payment.gatewayStatus === "PE" ? "PE" : null;
  let progress: Progress | null = own !== null && counts(own, payment.lastCheckedAt ?? payment.createdAt) ? own : null;
  let final: GatewayStatus | null = null;
  for (const hook of hooks) {
    const status = agreedStatus(hook, payment)?.code;
    if (status === undefined) return { kind: "unclear" };
    if (isFinalGatewayStatus(status)) final = status;
    else if ((status === "PE" || status === "AC") && counts(status, hook.receivedAt) && (status === "AC" || progress === null)) progress = status;
  }
  if (final) return { kind: "final", status: final };
  return progress ? { kind: "progress", progress } : { kind: "nothing" };
}

const PENDING_REASON: Record<Progress, PendingReason> = { AC: "NETWORK_ACTION_REQUIRED", PE: "BUYER_ACTION_REQUIRED" };

async function pendingThenNextAction(deps: PaymentsDeps, payment: Payment & { shop: { shopDomain: string } }, reason: PendingReason): Promise<ReturnResult> {
  const pending = await enqueuePending(deps, payment, reason);
  return nextActionFor(deps, payment, pending.id);
}

/**
 * Reads the order for a return: at the payment's first return read, through the shop's listing
 * when the shop can be taken at once (one call, which settles the shop's other open payments too
 * and may stand for the reconciler's next listing: readShopOrdersAtReturn), else by itself, as
 * every later read of it is (a reload of the waiting page), those only while the quota keeps its
 * reserve for new orders. The payment's state and status after it; null when no read was made
 * or none succeeded.
 */
async function readAtReturn(deps: PaymentsDeps, payment: Payment & { shop: Shop }, access: ShopGatewayAccess): Promise<Pick<Payment, "state" | "gatewayStatus"> | null> {
  const orderId = payment.gatewayOrderId!;
  const listing =
    payment.returnReadAt !== null
      ? "not_listed"
      : await readShopOrdersAtReturn(deps, payment.shop, payment.gatewayEnv as GatewayEnv, orderId, SHOPPER_WAITING_READ).catch((error: unknown) => {
          deps.logger.error("The shop's orders could not be read on the shopper's return", { paymentId: payment.id, error });
          return "failed" as const;
        });
  if (typeof listing === "object") return listing.recorded;
  if (listing !== "not_listed") {
    // A failed listing was logged where it failed, with the shop; an order the listing could not give is logged here.
    if (listing === "unread") deps.logger.warn("Order read failed on the shopper's return", { paymentId: payment.id, kind: "listing" });
    return null;
  }
  // A return after the payment's first (the waiting page reloading, a link opened again and
  // again) reads only while the device's quota keeps its reserve for new orders, as the payment
  // page does: such returns could otherwise spend the device's minute and day, and every
  // shopper of the shop would be refused a new order until they freed.
  if (payment.returnReadAt !== null && !keepsReserve(await access.client.quotaRemaining())) return null;
  const readAt = deps.clock.now();
  const read = await access.client.orderInfo(orderId, SHOPPER_WAITING_READ);
  if (read.isErr()) {
    deps.logger.warn("Order read failed on the shopper's return", { paymentId: payment.id, kind: read.error.kind });
    return null;
  }
  return (await settleFromGatewayOrder(deps, payment.id, read.value, "return", readAt)).payment;
}

/** The shopper gave the payment up: recorded (the payment page sends them to the checkout from now on), and sent to the checkout to choose again. */
async function leftForCheckout(deps: PaymentsDeps, payment: Payment): Promise<ReturnResult> {
  await deps.db.paymentEvent.create({ data: { paymentId: payment.id, type: SHOPPER_ABANDONED_EVENT, at: deps.clock.now() } });
  return { kind: "redirect", url: payment.cancelUrl };
}

export async function handleShopperReturn(deps: PaymentsDeps, input: { paymentId: string; signature: string; outcome: ReturnOutcome }): Promise<ReturnResult> {
  const payment = await deps.db.payment.findUnique({ where: { id: input.paymentId }, include: { shop: true } });
  // The signature binds the link to this payment and its shop: no other payment can be settled with it.
  if (!payment || !deps.links.verify(payment, input.signature)) return { kind: "not_found" };

  const finalMessage = () => deps.db.outboxMessage.findUnique({ where: { dedupeKey: finalMessageKey(payment.id) } });
  if (payment.state === "not_started") return { kind: "redirect", url: payment.cancelUrl };
  const nextPage = shopifyNextPage(payment);
  if (nextPage) return { kind: "redirect", url: nextPage };
  // No order yet: a "ko" of a payment still open is the coin list's "pay another way" (one
  // that ended, unpaid, is sent through the same link by its page). Nothing can have been sent
  // for it, so the shopper goes back to the checkout even when the shop uninstalled the app.
  if (!payment.gatewayOrderId && !(payment.shop.uninstalledAt && payment.orderRequestedAt)) {
    return input.outcome === "ko" && isOpenPaymentState(payment.state) ? leftForCheckout(deps, payment) : { kind: "redirect", url: payment.cancelUrl };
  }
  if (payment.shop.uninstalledAt) return { kind: "shop_gone", locale: payment.merchantLocale };

  if (input.outcome === "standby" && (payment.state === "awaiting_payment" || payment.state === "confirming")) {
    const held = await heldState(deps, payment, true);
    if (held.kind === "progress") return pendingThenNextAction(deps, payment, PENDING_REASON[held.progress]);
  }

  let state = payment.state;
  let gatewayStatus = payment.gatewayStatus;
  let readHere = false;
  // Credentials the app cannot read leave the order unread: the shopper is sent on from what is stored.
  const gateway = orderReader(deps.gateways, payment.shop, payment.gatewayEnv as GatewayEnv);
  const access = gateway.state === "connected" ? gateway.access : null;
  if (access && state !== "paid" && state !== "failed" && (await claimReturnRead(deps, payment.id))) {
    const read = await readAtReturn(deps, payment, access);
    if (read) ({ state, gatewayStatus } = read);
    readHere = read !== null;
  }

  if (state === "paid" || state === "failed") {
    const message = await finalMessage();
    const next = await nextActionFor(deps, payment, message?.id);
    if (next.kind !== "wait" || !message) return next;
    // Ended unpaid, and Shopify has yet to take the rejection (slow, out of reach, or refusing
    // it): the shopper goes back to the checkout to choose again, as the rejection would send
    // them, not to a page that waits for a payment being confirmed.
    if (state === "failed") return { kind: "redirect", url: payment.cancelUrl };
    // Refused by Shopify (a second payment of one checkout, say): no nextAction comes until the
    // merchant sees to the flag. A shopper who paid must not be left to think it failed.
    const refused = (await deps.db.outboxMessage.findUnique({ where: { id: message.id }, select: { status: true } }))?.status === "failed";
    if (!refused) return next;
    return { kind: "shop_notified", retryAfterSeconds: SHOP_NOTIFIED_RECHECK_SECONDS, locale: payment.merchantLocale };
  }
  if (state === "started") return { kind: "redirect", url: payment.cancelUrl };
  // Sent back without paying, or back before even choosing a coin (NR: nothing is under way,
  // so Shopify is not told "pending"): Shopify lets the shopper choose again.
  const abandoned = () => leftForCheckout(deps, payment);
  // The order as this return read it decides; when it was not read here (its read failed,
  // another return is reading it now, or the credentials cannot be read), what the app holds
  // of it does. A shopper sent back as paid or to wait may well have paid, and so may one sent
  // back through the gateway's "ko" link whose money the order's signed webhooks show: sending
  // them to choose another payment method could make them pay twice.
  if (state === "awaiting_payment" && input.outcome === "ko") {
    if (readHere) {
      // Read here still waiting for the crypto, or never started: the shopper gave up. Read in
      // any other status, the payment was left open and flagged for the merchant (a status no
      // one can interpret, an order made for other terms): it may hold the shopper's money.
      if (gatewayStatus === "PE" || gatewayStatus === "NR") return abandoned();
      return { kind: "shop_notified", retryAfterSeconds: SHOP_NOTIFIED_RECHECK_SECONDS, locale: payment.merchantLocale };
    }
    const held = await heldState(deps, payment, false);
    // Money seen, or paid: Shopify hears pending until the webhooks or the reconciler settle it.
    if (held.kind === "progress" && held.progress === "AC") return pendingThenNextAction(deps, payment, "NETWORK_ACTION_REQUIRED");
    if (held.kind === "final" && decideForGatewayStatus(held.status).kind === "resolve") return pendingThenNextAction(deps, payment, "NETWORK_ACTION_REQUIRED");
    if (held.kind === "unclear") return { kind: "wait", retryAfterSeconds: 3, locale: payment.merchantLocale };
    // A coin chosen, nothing seen of it, and the gateway says the shopper gave up: they choose again.
    return abandoned();
  }
  if (state === "awaiting_payment" && gatewayStatus === "NR") {
    // NR as this return read it: the shopper never chose a coin.
    if (readHere) return abandoned();
    // NR only as the order was created: what the app holds decides, else the shopper waits a
    // moment for the read.
    const held = await heldState(deps, payment, false);
    if (held.kind === "progress") return pendingThenNextAction(deps, payment, PENDING_REASON[held.progress]);
    if (held.kind === "final") {
      const decision = decideForGatewayStatus(held.status);
      // Paid by the signed webhook the inbox has yet to settle: Shopify hears pending until it does.
      if (decision.kind === "resolve") return pendingThenNextAction(deps, payment, "NETWORK_ACTION_REQUIRED");
      // Ended unpaid: the rejection to come sends the shopper to choose again all the same
      // (unless the shop has every outcome confirmed by a read first: then the read decides).
      if (decision.kind === "reject" && !payment.shop.readOrderOnWebhook) return abandoned();
    }
    // Nothing held and no order to read (credentials the app cannot open): the gateway's page
    // sent this shopper back as paid, or to wait, and may well be right; they wait, told not to
    // pay again, until the order can be read (or the reconciler ends the payment).
    return { kind: "wait", retryAfterSeconds: 3, locale: payment.merchantLocale };
  }
  return pendingThenNextAction(deps, payment, state === "confirming" ? "NETWORK_ACTION_REQUIRED" : "BUYER_ACTION_REQUIRED");
}
