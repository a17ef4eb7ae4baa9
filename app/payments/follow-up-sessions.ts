// Flow 6: refund, capture and void requests. Shopify gets 201 at once; the request is
// recorded (deduplicated on Shopify's id) together with the call that finishes it, and is
// "resolving" or "rejecting" until Shopify takes that call (then resolved or rejected) or
// refuses it (failed): see the outbox. The gateway has no refund API: refunds are rejected
// with a message that tells the merchant how to refund from the gateway dashboard.
import Decimal from "decimal.js";
import { Prisma, type Payment } from "../../generated/prisma/sqlite/client";
import { isUniqueViolation } from "~/db/prisma-errors";
import { gatewayStatusInfo, isGatewayStatus } from "~/gateway/statuses";
import { checkPaymentNow, SHOPPER_WAITING_READ } from "./check-payment";
import type { PaymentsDeps } from "./deps";
import { enqueue, followUpMessageKey, type OutboxPayload } from "./outbox";
import { storedStatusShowsFunds } from "./settle-payment";
import type { FollowUpKind } from "./shopify-requests";
import { flagColumns, flagEvent, type AttentionFlag } from "./attention-flags";
import { decideForGatewayStatus, type AttentionReason } from "./status-mapping";

/** How a refund is made: in the gateway dashboard, then recorded in Shopify. */
const REFUND_HOW =
  "issue the refund in the gateway dashboard (Payments, select the order, Refund), which sends the shopper a refund voucher for the full amount, then record the refund in Shopify as a manual refund.";

export const REFUND_MESSAGE = `Crypto payments cannot be refunded from Shopify. To refund, ${REFUND_HOW}`;

export const PARTIAL_REFUND_MESSAGE =
  "Crypto payments cannot be refunded from Shopify, and the gateway refunds a payment only in full (its dashboard sends the shopper a voucher for the whole amount). To return part of it, return that part to the shopper another way, then record it in Shopify as a manual refund.";

/**
 * A refund of a payment whose gateway order shows no crypto received (a signed notification
 * marked it paid, and the gateway's own record then contradicted it): nothing is at the
 * gateway to refund.
 */
export const NOTHING_RECEIVED_REFUND_MESSAGE = (status: string) =>
  `Crypto payments cannot be refunded from Shopify, and the gateway's record of this payment shows no crypto received (status ${status}), so there is nothing at the gateway to refund. Compare the order in the gateway dashboard: if the shopper sent nothing, record the refund in Shopify as a manual refund, which returns no money.`;

/** What a flag that holds a capture says, and when it holds it. */
interface CaptureHold {
  says: string;
  /** Whether the flag still holds the capture of `payment`; always, when not given. */
  holds?: (payment: Payment) => boolean;
}

/**
 * The open flags that hold a capture, and what each says: a signed
 * webhook that marked the payment paid and that the gateway's own record then contradicted, a
 * gateway order for another amount or fiat than the payment, and a status of the order no one
 * can interpret (which a later read raises in place of the contradicted notification's flag,
 * when the order moves on to such a status), only while the order's last status read is still
 * one no one knows: once the gateway shows a known one, the payment is decided on that.
 */
const CAPTURE_HELD_BY: ReadonlyMap<string, CaptureHold> = new Map<AttentionReason, CaptureHold>([
  ["webhook_mismatch", { says: "The gateway's record of this payment does not match the notification that marked it paid." }],
  ["amount_mismatch", { says: "The gateway's order for this payment is not for the payment's amount or currency." }],
  [
    "unknown_status",
    {
      says: "The gateway's order for this payment shows a status the app cannot interpret, so the app does not take it as paid.",
      holds: (payment) => !isGatewayStatus(payment.gatewayStatus),
    },
  ],
]);

/**
 * Whether the payment's gateway order shows no crypto received: a known status that shows
 * none, and no transaction seen on it. Null status or an unknown one (a refund the gateway
 * made, say) is not taken for "nothing received".
 */
async function nothingReceived(tx: Prisma.TransactionClient, payment: Payment): Promise<boolean> {
  if (!isGatewayStatus(payment.gatewayStatus) || storedStatusShowsFunds(payment)) return false;
  return (await tx.paymentTransaction.count({ where: { paymentId: payment.id } })) === 0;
}

export interface FollowUpRequest {
  id: string;
  gid: string;
  payment_id: string;
  amount?: string | undefined;
  currency?: string | undefined;
  test?: boolean | undefined;
}

export type FollowUpAnswer = { status: 201 } | { status: 404 | 422; body: { error: string; message: string } };

/** A request the app accepted: its answer waits for Shopify (resolving), or Shopify took it (resolved). */
const ACCEPTED = ["resolving", "resolved"];

/** Decided inside the transaction that records the request, on its payment as read after the row was locked (see below). */
async function decide(tx: Prisma.TransactionClient, kind: FollowUpKind, shopId: string, request: FollowUpRequest, payment: Payment | null, noneReceived: boolean): Promise<OutboxPayload> {
  if (kind === "refund") {
    const reject = (merchantMessage: string): OutboxPayload => ({ kind: "refund.reject", gid: request.gid, merchantMessage });
    if (!payment) return reject("This app has no record of the payment to refund.");
    // Nothing arrived at the gateway: the merchant is not sent there to refund crypto that never came.
    if (noneReceived) return reject(NOTHING_RECEIVED_REFUND_MESSAGE(payment.gatewayStatus!));
    // The gateway refunds a payment only in full: a part asked for is not to be returned through it.
    const part = request.amount !== undefined && new Decimal(request.amount).lt(new Decimal(payment.amount));
    return reject(part ? PARTIAL_REFUND_MESSAGE : REFUND_MESSAGE);
  }
  if (kind === "capture") {
    const reject = (merchantMessage: string): OutboxPayload => ({ kind: "capture.reject", gid: request.gid, merchantMessage });
    if (!payment) return reject("This app has no record of the payment to capture.");
    // A sale is paid in full when it resolves: there is no authorization to capture.
    if (payment.kind !== "authorization") return reject("This payment was a sale, not an authorization: it was completed when the shopper paid, and there is nothing to capture.");
    // An authorization is captured once, and never after it was voided: crypto that arrives
    // after a void is the shopper's, not the order's. (The gateway order is left as it is: the
    // app has no way to cancel it; crypto paid to it later is flagged for a person.)
    const earlier = await tx.sessionRequest.findFirst({
      where: { shopId, paymentShopifyId: request.payment_id, kind: { in: ["capture", "void"] }, status: { in: ACCEPTED } },
      select: { kind: true },
    });
    if (earlier?.kind === "void") return reject(`This authorization was voided, so it cannot be captured. Crypto the shopper paid since is theirs: to return it, ${REFUND_HOW}`);
    if (earlier?.kind === "capture") return reject("This authorization was already captured in full; it cannot be captured again.");
    if (payment.state !== "paid") return reject("The crypto payment was not completed, so there is nothing to capture.");
    // Paid on a signed webhook that no read of the gateway's own record has backed yet (the
    // capture's own read, made before this decision, could not): nothing is captured on a
    // notification alone.
    if (payment.unverifiedSince !== null) {
      return reject("A signed notification from the gateway marked this payment paid, and the app could not confirm it with the gateway's own record yet. Capture again in a few minutes.");
    }
    // The gateway's own record shows no crypto received (the notification that marked it paid
    // contradicted), the flag handled or not: nothing is captured that never arrived. Once the
    // gateway shows it paid (the merchant marked it so in its dashboard), a read of the order
    // (Check now, or the reconciler's) lets the capture through.
    if (noneReceived) {
      return reject(`The gateway's record of this payment shows no crypto received (status ${payment.gatewayStatus}), so there is nothing to capture. If the shopper sent nothing, void the authorization. If the crypto did arrive, once the gateway dashboard shows the order paid press Check now on the payment in the app, then capture again.`);
    }
    // The gateway's record, as last read, shows the order ended without being paid (underpaid,
    // out of condition, expired or cancelled with crypto sent late, failed): whatever flag the
    // payment carries now (a later read's own flag takes the slot of the contradicted
    // notification's), handled or not, nothing is captured until a read shows the order paid.
    if (isGatewayStatus(payment.gatewayStatus) && decideForGatewayStatus(payment.gatewayStatus).kind === "reject") {
      const status = gatewayStatusInfo[payment.gatewayStatus];
      return reject(
        `The gateway's record of this payment shows it ${status.name.toLowerCase()} (status ${status.code}), not paid, so it cannot be captured. If the shopper did pay in full, once the gateway dashboard shows the order paid press Check now on the payment in the app, then capture again; otherwise void the authorization and return what the shopper sent from the gateway dashboard.`,
      );
    }
    // A flag that holds the capture until a person has compared the gateway's record with
    // the payment and marked it handled.
    const heldBy = payment.attentionResolvedAt === null && payment.attention !== null ? CAPTURE_HELD_BY.get(payment.attention) : undefined;
    if (heldBy && (heldBy.holds?.(payment) ?? true)) return reject(`${heldBy.says} Compare the order in the gateway dashboard, mark the payment's flag handled in the app, then capture again.`);
    // Crypto settles in full: what is captured is what the shopper paid, no more and no less
    // (a partial capture would leave crypto received that Shopify's books do not show).
    const paid = `${payment.amount} ${payment.currency}`;
    if (request.currency !== undefined && request.currency.toUpperCase() !== payment.currency.toUpperCase()) {
      return reject(`The shopper paid ${paid} in crypto; a capture in ${request.currency} cannot be made.`);
    }
    if (request.amount !== undefined && !new Decimal(request.amount).equals(new Decimal(payment.amount))) {
      return reject(`The shopper paid ${paid} in full in crypto: capture that amount. The gateway cannot return part of a payment (a refund from its dashboard is a voucher for the full amount): to return part, capture in full, then return the difference to the shopper another way and record it in Shopify as a manual refund.`);
    }
    return { kind: "capture.resolve", gid: request.gid };
  }
  if (!payment) return { kind: "void.reject", gid: request.gid, merchantMessage: "This app has no record of the payment to void." };
  // A sale is paid in full when it resolves: there is no authorization to void, and nothing is
  // said of the crypto being the shopper's.
  if (payment.kind !== "authorization") {
    return { kind: "void.reject", gid: request.gid, merchantMessage: `This payment was a sale, not an authorization: it was completed when the shopper paid, and there is nothing to void. To return the crypto, ${REFUND_HOW}` };
  }
  // A void ends the authorization in Shopify, which is what the merchant asks for, whether or
  // not crypto arrived for it: crypto that did is the shopper's, and the payment is flagged
  // to refund it from the gateway dashboard (receiveFollowUpSession). Refusing the void instead
  // left an authorization open that Shopify can only capture (it refunds only what was captured).
  // Once captured, the money is the order's: it is returned by a refund.
  const captured = await tx.sessionRequest.findFirst({
    where: { shopId, paymentShopifyId: request.payment_id, kind: "capture", status: { in: ACCEPTED } },
    select: { id: true },
  });
  if (captured) return { kind: "void.reject", gid: request.gid, merchantMessage: `This authorization was already captured, so it cannot be voided. To return the crypto, ${REFUND_HOW}` };
  return { kind: "void.resolve", gid: request.gid };
}

/**
 * The flag of an authorization voided while the gateway's order already shows crypto received
 * (on its way to confirmation, or paid): that crypto is the shopper's. Null when the order
 * shows none (crypto paid later is flagged when it shows: settle-payment's paidAfterVoid).
 */
function voidedHoldingFunds(payment: Payment, now: Date): AttentionFlag | null {
  if (!storedStatusShowsFunds(payment)) return null;
  return {
    reason: "paid_after_void",
    detail: `Shopify voided this authorization on ${now.toISOString()}, and crypto had already arrived at the gateway for it (status ${payment.gatewayStatus}). It belongs to the shopper: refund it from the gateway dashboard before anything ships.`,
  };
}

/**
 * An authorization a signed webhook marked paid, not yet backed by a read of the gateway's own
 * record (the next listing would do it, within the reconciler's interval): its order is read
 * now, once and briefly, so that the capture is decided on the gateway's record. A read that
 * fails leaves it unconfirmed, and the capture is refused with a word to try again.
 */
async function confirmBeforeCapture(deps: PaymentsDeps, shopId: string, request: FollowUpRequest): Promise<void> {
  // A capture Shopify delivers again was decided the first time, and gets that answer: a read
  // now would change nothing and only spend the device's quota and the request's time.
  const decided = await deps.db.sessionRequest.findUnique({ where: { shopId_kind_shopifyId: { shopId, kind: "capture", shopifyId: request.id } }, select: { id: true } });
  if (decided) return;
  const shopifyPaymentId = request.payment_id;
  const payment = await deps.db.payment.findUnique({ where: { shopId_shopifyPaymentId: { shopId, shopifyPaymentId } }, select: { id: true, kind: true, unverifiedSince: true } });
  if (payment?.kind !== "authorization" || payment.unverifiedSince === null) return;
  const read = await checkPaymentNow(deps, shopId, payment.id, { budget: SHOPPER_WAITING_READ });
  if (!read.ok) deps.logger.warn("Could not read the gateway's order before deciding a capture; the capture is refused for now", { paymentId: payment.id, reason: read.reason });
}

export async function receiveFollowUpSession(deps: PaymentsDeps, input: { kind: FollowUpKind; shopDomain: string; request: FollowUpRequest }): Promise<FollowUpAnswer> {
  const shop = await deps.db.shop.findUnique({ where: { shopDomain: input.shopDomain } });
  if (!shop) return { status: 404, body: { error: "unknown_shop", message: "This shop has not installed the app." } };
  const { request } = input;
  // The uninstall deleted the shop's Shopify token, so no answer could ever reach Shopify:
  // refused as a payment session of the shop is, with nothing recorded or queued. A repeat of
  // a request taken before the uninstall is answered as it was the first time.
  if (shop.uninstalledAt) {
    const taken = await deps.db.sessionRequest.findUnique({ where: { shopId_kind_shopifyId: { shopId: shop.id, kind: input.kind, shopifyId: request.id } }, select: { id: true } });
    if (taken) return { status: 201 };
    return { status: 422, body: { error: "shop_not_configured", message: "This shop has uninstalled the app." } };
  }
  if (input.kind === "capture") await confirmBeforeCapture(deps, shop.id, request);
  const now = deps.clock.now();
  try {
    await deps.db.$transaction(async (tx) => {
      // One decision at a time per payment, made on what is committed: the payment's row is
      // locked first (a write that changes nothing: a row lock on PostgreSQL, the write lock on
      // SQLite) and held until this request is recorded. So two captures (or a capture and a
      // void) that arrive together, on one instance or two, cannot both be accepted, and a
      // settlement of the payment comes wholly before the decision or wholly after it.
      await tx.$executeRaw`UPDATE "Payment" SET "shopifyPaymentId" = "shopifyPaymentId" WHERE "shopId" = ${shop.id} AND "shopifyPaymentId" = ${request.payment_id}`;
      const payment = await tx.payment.findUnique({ where: { shopId_shopifyPaymentId: { shopId: shop.id, shopifyPaymentId: request.payment_id } } });
      const noneReceived = input.kind !== "void" && payment !== null && (await nothingReceived(tx, payment));
      const payload = await decide(tx, input.kind, shop.id, request, payment, noneReceived);
      // An accepted void is a new version of the payment's row: a settlement decided on the
      // row before it (which could not see the void) fails its write and is decided again,
      // so crypto paid after the void is flagged (settle-payment).
      if (payment && payload.kind === "void.resolve") {
        // A void repeated under another session (a retry or a bug on either side) finds the
        // authorization voided already: the crypto was flagged then (or by the settlement that
        // saw it arrive since), and the merchant's handling of that flag stands.
        const voidedBefore = await tx.sessionRequest.count({ where: { shopId: shop.id, paymentShopifyId: request.payment_id, kind: "void", status: { in: ACCEPTED } } });
        const flag = voidedBefore > 0 ? null : voidedHoldingFunds(payment, now);
        await tx.payment.update({
          where: { id: payment.id },
          data: { updatedAt: new Date(Math.max(now.getTime(), payment.updatedAt.getTime() + 1)), ...(flag ? flagColumns(flag) : {}) },
        });
        if (flag) await tx.paymentEvent.create({ data: { paymentId: payment.id, ...flagEvent(flag, now) } });
      }
      const record = await tx.sessionRequest.create({
        data: {
          shopId: shop.id,
          kind: input.kind,
          shopifyId: request.id,
          gid: request.gid,
          paymentShopifyId: request.payment_id,
          amount: request.amount ?? "0",
          currency: request.currency ?? "",
          test: request.test ?? false,
          status: payload.kind.endsWith(".resolve") ? "resolving" : "rejecting",
        },
      });
      if (payment) {
        // The amount and currency Shopify asked for; the answer is queued until Shopify takes it
        // (the outbox adds what Shopify did).
        const detail = {
          amount: request.amount,
          currency: request.currency,
          answer: payload.kind,
          queued: true,
          // A refund of a payment the gateway shows nothing received for: the timeline says there is nothing to refund there.
          ...(noneReceived && input.kind === "refund" ? { received: false, gatewayStatus: payment.gatewayStatus } : {}),
        };
        await tx.paymentEvent.create({ data: { paymentId: payment.id, type: `${input.kind}_requested`, detail: JSON.stringify(detail), at: now } });
      }
      await enqueue(tx, { shopDomain: shop.shopDomain, paymentId: payment?.id ?? null, dedupeKey: followUpMessageKey(input.kind, record.id), payload, now });
    });
  } catch (error) {
    // Shopify delivered the same request again: it was recorded the first time.
    if (!isUniqueViolation(error)) throw error;
  }
  deps.notify?.outbox();
  return { status: 201 };
}
