// The durable outbox of calls to Shopify's Payments Apps API. A message is stored in the
// same transaction as the decision that needs it, then delivered by `deliverDueMessages`
// (any number of workers: each message is claimed atomically) or at once by
// `deliverNow`. Throttling, 5xx and network failures are retried with backoff until they
// succeed; a refused token or permission is retried too (the merchant can mend it) and flags
// the payment; Shopify's "already done" counts as success; other user errors are recorded and
// shown to the merchant. The answers to refunds, captures and voids are told on their
// payment's timeline, and a refused one flags the payment as a payment's own call does.
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { backoffMs, type BackoffPolicy } from "~/lib/backoff";
import { whileRenewing } from "~/lib/renewal";
import { Prisma } from "../../generated/prisma/sqlite/client";
import type { OutboxMessage } from "../../generated/prisma/sqlite/client";
import { classifyUserErrors } from "~/shopify/payments-apps/classify-user-errors";
import type { PaymentsAppsClient, PaymentsAppsResult } from "~/shopify/payments-apps/client";
import { describePaymentsAppsError } from "~/shopify/payments-apps/errors";
import { PAYMENT_SESSION_REJECTION_CODES, PENDING_REASONS } from "~/shopify/payments-apps/outcome";
import type { PaymentsDeps, ShopifyDirectory } from "./deps";
import { asSentence } from "~/lib/text";
import { parseStoredJson } from "~/lib/stored-json";
import { FOLLOW_UP_FLAG_PREFIX, recordDelivery, recordRetry } from "./outbox-rows.server";
import { followUpAnswerOf, type FollowUpKind } from "./shopify-requests";
import type { AttentionFlag } from "./attention-flags";

const gid = z.string().min(1);
export const outboxPayloadSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("payment.resolve"), gid }),
  z.object({ kind: z.literal("payment.reject"), gid, code: z.enum(PAYMENT_SESSION_REJECTION_CODES), merchantMessage: z.string() }),
  z.object({ kind: z.literal("payment.pending"), gid, pendingExpiresAt: z.string().datetime(), reason: z.enum(PENDING_REASONS) }),
  z.object({ kind: z.literal("refund.resolve"), gid }),
  z.object({ kind: z.literal("refund.reject"), gid, merchantMessage: z.string() }),
  z.object({ kind: z.literal("capture.resolve"), gid }),
  z.object({ kind: z.literal("capture.reject"), gid, merchantMessage: z.string() }),
  z.object({ kind: z.literal("void.resolve"), gid }),
  z.object({ kind: z.literal("void.reject"), gid, merchantMessage: z.string() }),
  z.object({ kind: z.literal("app.configure"), ready: z.boolean(), externalHandle: z.string().nullable() }),
]);
export type OutboxPayload = z.infer<typeof outboxPayloadSchema>;

type Tx = Prisma.TransactionClient;

/** The dedupe key of a payment's one final Shopify call (resolve or reject). */
export const finalMessageKey = (paymentId: string): string => `payment:${paymentId}:final`;

export async function enqueue(
  tx: Tx,
  message: { shopDomain: string; paymentId?: string | null; dedupeKey: string; payload: OutboxPayload; now: Date },
): Promise<OutboxMessage> {
  const existing = await tx.outboxMessage.findUnique({ where: { dedupeKey: message.dedupeKey } });
  if (existing) return existing;
  return tx.outboxMessage.create({
    data: {
      shopDomain: message.shopDomain,
      paymentId: message.paymentId ?? null,
      kind: message.payload.kind,
      dedupeKey: message.dedupeKey,
      payload: JSON.stringify(message.payload),
      nextAttemptAt: message.now,
    },
  });
}

/** The dedupe key of the call answering a refund, capture or void request (its SessionRequest's id). */
export const followUpMessageKey = (kind: FollowUpKind, requestId: string): string => `${kind}:${requestId}`;

const FOLLOW_UP_KEY = /^(?:refund|capture|void):(.+)$/;

/** A call that answers a refund, capture or void Shopify asked for: which, whether the app accepted it, and the Shopify session. */
interface FollowUpCall {
  request: FollowUpKind;
  accepted: boolean;
  session: string;
}

function followUpCall(payload: OutboxPayload): FollowUpCall | null {
  const answer = followUpAnswerOf(payload.kind);
  return answer && "gid" in payload ? { ...answer, session: payload.gid } : null;
}

/**
 * The opening words of the flag a follow-up's refused answer raises. They name the Shopify
 * session, so that Shopify taking the answer later closes this flag and no other.
 */
function followUpFlagOpening(call: FollowUpCall): string {
  const id = call.session.slice(call.session.lastIndexOf("/") + 1);
  return `${FOLLOW_UP_FLAG_PREFIX}${call.request} it asked for (${call.request} session ${id}: the app ${call.accepted ? "accepted" : "refused"} it).`;
}

/** Whether the payment's timeline already tells that Shopify refuses this follow-up's answer (told once, not at every attempt). */
async function followUpRefusalTold(deps: PaymentsDeps, paymentId: string, call: FollowUpCall): Promise<boolean> {
  const told = await deps.db.paymentEvent.count({ where: { paymentId, type: "shopify_refused", detail: { contains: JSON.stringify(call.session) } } });
  return told > 0;
}

/** The flag a follow-up's answer Shopify refused for good raises (see deliver's followUp). */
function refusedFollowUpFlag(call: FollowUpCall, message: string): AttentionFlag {
  return { reason: "shopify_error", detail: `${followUpFlagOpening(call)} ${asSentence(message)} Check the ${call.request} in Shopify.` };
}

/** What of the shop's Shopify access a call found missing: no token at all, or a refusal. */
const NO_TOKEN_REASON = "no offline access token for the shop";

/** How a flag words a call that failed for `reason` in a way waiting alone will not mend. */
function refusedWords(reason: string): string {
  return reason === NO_TOKEN_REASON ? "The app holds no Shopify access token for this shop" : "Shopify refused the call";
}

/** The flag a follow-up's answer Shopify refuses in a way waiting alone will not mend raises while it is still tried (see deliver's followUpRefused). */
function retriedFollowUpFlag(call: FollowUpCall, reason: string): AttentionFlag {
  return {
    reason: "shopify_error",
    detail: `${followUpFlagOpening(call)} ${refusedWords(reason)}, so the ${call.request} stays open in Shopify; the app keeps trying, at most 10 minutes apart. ${reason}`,
  };
}

/** A follow-up's refusal on the timeline; `flagged` is absent from those stored before it was recorded. */
const refusedEventSchema = z.object({ call: z.string(), session: z.string(), message: z.string(), retrying: z.boolean().optional(), flagged: z.boolean().optional() });

/**
 * The flag of the latest refund, capture or void answer Shopify refused (for good, or in a way
 * the app keeps trying: a token or permission refused) while another flag of the payment was
 * open, which kept it from being raised (a refusal leaves another open flag's advice in place),
 * and that is still the last word on its request: no later answer of the same kind was taken
 * since. Null when there is none. Asked when the merchant marks that other flag handled, so
 * the refusal is not lost with it.
 */
export async function refusalKeptFromItsFlag(tx: Prisma.TransactionClient, payment: { id: string; shopId: string; shopifyPaymentId: string }): Promise<AttentionFlag | null> {
  const refusals = await tx.paymentEvent.findMany({ where: { paymentId: payment.id, type: "shopify_refused" }, orderBy: { at: "desc" }, select: { detail: true, at: true } });
  for (const event of refusals) {
    const refused = parseStoredJson(refusedEventSchema, event.detail);
    // A refusal that raised its own flag was not kept from it: handling that flag ends it.
    if (!refused || refused.flagged === true) continue;
    const answer = followUpAnswerOf(refused.call);
    if (!answer) continue;
    const call: FollowUpCall = { ...answer, session: refused.session };
    const flagged = await tx.paymentEvent.count({ where: { paymentId: payment.id, type: "attention", detail: { contains: JSON.stringify(followUpFlagOpening(call)).slice(1, -1) } } });
    if (flagged > 0) continue;
    const takenSince = await tx.sessionRequest.count({
      where: { shopId: payment.shopId, paymentShopifyId: payment.shopifyPaymentId, kind: answer.request, status: { in: ["resolved", "rejected"] }, updatedAt: { gt: event.at } },
    });
    if (takenSince > 0) continue;
    return refused.retrying ? retriedFollowUpFlag(call, refused.message) : refusedFollowUpFlag(call, refused.message);
  }
  return null;
}

/** A pending call is sent only while its expiry is at least this far ahead (Shopify refuses one in the past). */
const PENDING_SEND_MARGIN_MS = 60_000;

/** Shopify calls that failed: 1 s doubling to 10 min. */
const OUTBOX_BACKOFF: BackoffPolicy = { baseMs: 1_000, capMs: 600_000 };
/** The longest error kept of a delivery that crashed (the health page shows it). */
const CRASH_ERROR_MAX = 500;

function call(client: PaymentsAppsClient, payload: OutboxPayload): Promise<PaymentsAppsResult> {
  switch (payload.kind) {
    case "payment.resolve":
      return client.resolvePaymentSession(payload.gid);
    case "payment.reject":
      return client.rejectPaymentSession(payload.gid, { code: payload.code, merchantMessage: payload.merchantMessage });
    case "payment.pending":
      return client.pendPaymentSession(payload.gid, { pendingExpiresAt: new Date(payload.pendingExpiresAt), reason: payload.reason });
    case "refund.resolve":
      return client.resolveRefundSession(payload.gid);
    case "refund.reject":
      return client.rejectRefundSession(payload.gid, { code: "PROCESSING_ERROR", merchantMessage: payload.merchantMessage });
    case "capture.resolve":
      return client.resolveCaptureSession(payload.gid);
    case "capture.reject":
      return client.rejectCaptureSession(payload.gid, { code: "PROCESSING_ERROR", merchantMessage: payload.merchantMessage });
    case "void.resolve":
      return client.resolveVoidSession(payload.gid);
    case "void.reject":
      return client.rejectVoidSession(payload.gid, { code: "PROCESSING_ERROR", merchantMessage: payload.merchantMessage });
    case "app.configure":
      return client.configurePaymentsApp({ externalHandle: payload.externalHandle, ready: payload.ready });
  }
}

/**
 * What is sent for a stored payload. Readiness is sent as the shop has it now, not as it was
 * when the message was stored: a message retried after a newer one was delivered (Shopify was
 * failing, or the two went out at once) would otherwise put the older value back for good.
 */
async function currentPayload(deps: PaymentsDeps, shopDomain: string, payload: OutboxPayload): Promise<OutboxPayload> {
  if (payload.kind !== "app.configure") return payload;
  const shop = await deps.db.shop.findUnique({ where: { shopDomain }, select: { paymentsAppReady: true } });
  return shop ? { ...payload, ready: shop.paymentsAppReady } : payload;
}

const CLAIM_MS = 30_000;
/** Why a resolve is tried again: Shopify refused it while another payment of its checkout was being resolved. */
const RESOLVE_REFUSED_WHILE_ANOTHER_ON_ITS_WAY = "Shopify refused the resolve while another payment of this checkout was being resolved";

/**
 * How a pass's claim on a call that timed out ends: the pass keeps the message until it ends,
 * but is done with it and sends it no more (deliveryPass).
 */
const KEPT = "/kept";
const keptClaimOf = (claimId: string): string => `${claimId}${KEPT}`;
const isKept = (lockedBy: string | null): boolean => lockedBy?.endsWith(KEPT) ?? false;

/**
 * Claims one message for an inline delivery, only while it is due: a message waiting out its
 * backoff (Shopify throttling or failing) is not sent again by every refresh of a shopper's
 * waiting page, only by the worker when its time comes. A message a pass kept after its call
 * timed out is not being sent: it is claimed here once due, though that pass still runs.
 */
async function claim(deps: PaymentsDeps, id: string, worker: string): Promise<OutboxMessage | null> {
  const now = deps.clock.now();
  const [claimed] = await deps.db.outboxMessage.updateManyAndReturn({
    where: { id, status: "pending", nextAttemptAt: { lte: now }, OR: [{ lockedUntil: null }, { lockedUntil: { lt: now } }, { lockedBy: { endsWith: KEPT } }] },
    data: { lockedBy: worker, lockedUntil: new Date(now.getTime() + CLAIM_MS) },
  });
  return claimed ?? null;
}

export type DeliveryResult = "done" | "failed" | "retry" | "skipped";

/**
 * Delivers one claimed message and records what happened. `pass`: the delivery is part of a
 * worker's pass, which keeps a call that timed out claimed (under `keptClaim`) until it ends,
 * and is told so (deliverDueMessages).
 */
async function deliverClaimed(deps: PaymentsDeps, message: OutboxMessage, pass?: { keptClaim: string; kept: () => void }): Promise<DeliveryResult> {
  const now = () => deps.clock.now();
  const payload = outboxPayloadSchema.parse(JSON.parse(message.payload));
  const log = deps.logger.child({ outboxId: message.id, kind: payload.kind, shop: message.shopDomain });

  /**
   * A pending call with no point any more: done, unsent. The payment's final Shopify outcome
   * overtook it, or its window ended while it could not be sent (Shopify refuses an expiry in
   * the past, and that refusal would replace the payment's open flag, pending_window_expired
   * among them, with a Shopify error). A final call only queued behind it leaves it to go first;
   * one already sent to Shopify (taken, maybe, with its answer lost), or one still on its way
   * when Shopify refuses the pending as resolved or rejected already (`shopifyFinal`), leaves
   * the pending with no point: it is never sent after the final call.
   */
  const supersededPending = async (shopifyFinal = false): Promise<boolean> => {
    if (payload.kind !== "payment.pending" || !message.paymentId) return false;
    const windowEnded = Date.parse(payload.pendingExpiresAt) <= now().getTime() + PENDING_SEND_MARGIN_MS;
    if (!windowEnded) {
      const payment = await deps.db.payment.findUnique({ where: { id: message.paymentId }, select: { shopifyOutcome: true } });
      if (payment && payment.shopifyOutcome !== "resolved" && payment.shopifyOutcome !== "rejected") {
        const final = await deps.db.outboxMessage.findUnique({ where: { dedupeKey: finalMessageKey(message.paymentId) }, select: { status: true, attempts: true } });
        const finalSent = final !== null && (final.status !== "pending" || final.attempts > 0 || shopifyFinal);
        if (!finalSent) return false;
      }
    }
    await deps.db.outboxMessage.updateMany({
      where: { id: message.id, lockedBy: message.lockedBy },
      data: { status: "done", doneAt: now(), result: JSON.stringify({ superseded: true, ...(windowEnded ? { windowEnded: true } : {}) }), lockedBy: null, lockedUntil: null },
    });
    return true;
  };

  if (await supersededPending()) return "skipped";

  const followUp = followUpCall(payload);
  const client = await deps.shopify.forShop(message.shopDomain);
  // Renewing the shop's token first may have taken much of the claim (up to 20 s): the claim is
  // renewed before the call when less than half of it is left, and a claim that lapsed and was
  // taken meanwhile sends nothing (its new holder sends the call).
  if (client && message.lockedUntil !== null && message.lockedUntil.getTime() - now().getTime() < CLAIM_MS / 2 && !(await renewedClaim(deps, message))) {
    log.warn("The claim on the call lapsed while the shop's token was renewed; left to whoever holds it now", { attempts: message.attempts });
    return "skipped";
  }
  const attempts = message.attempts + 1;
  let sent = await currentPayload(deps, message.shopDomain, payload);
  let result: PaymentsAppsResult | null = client ? await call(client, sent) : null;
  // Shopify resolves at most one payment session of a checkout. A resolve it refuses while
  // another payment of the checkout is accepted is a second payment (the shopper paid twice):
  // its session is rejected instead, so that it does not stay pending in Shopify, and the
  // payment is flagged. Looked for only then, never on a resolve's way.
  let paidTwice: PaidTwice | null = null;
  if (client && payload.kind === "payment.resolve" && message.paymentId && result?.isOk() && !classifyUserErrors(result.value).ok) {
    const checkout = await otherPaymentsOfCheckout(deps, message.paymentId, payload.gid);
    paidTwice = checkout?.paidTwice ?? null;
    if (paidTwice) {
      sent = paidTwice.reject;
      result = await call(client, sent);
    } else if (checkout?.resolveOnItsWay) {
      // Another payment of the checkout is being resolved: Shopify may have taken it a moment
      // ago, before the app recorded it. Tried again once its answer is recorded.
      const reason = RESOLVE_REFUSED_WHILE_ANOTHER_ON_ITS_WAY;
      log.warn("Shopify refused the resolve; another payment of the checkout is being resolved, will retry", { attempts });
      await recordRetry(deps.sql, {
        messageId: message.id,
        claim: message.lockedBy!,
        attempts,
        lastError: reason,
        nextAttemptAt: new Date(now().getTime() + backoffMs(attempts, OUTBOX_BACKOFF, Math.random, null)),
        at: now(),
        flagPayment: null,
      });
      return "retry";
    }
  }

  if (result === null || result.isErr()) {
    const reason = result === null ? NO_TOKEN_REASON : describePaymentsAppsError(result.error);
    const retryAfter = result?.isErr() && result.error.kind === "throttled" ? result.error.retryAfterMs : null;
    const delay = backoffMs(attempts, OUTBOX_BACKOFF, Math.random, retryAfter);
    // The wait Shopify asked for, as the backoff obeys it (up to its cap): not hurried.
    const heldUntil = retryAfter === null || Number.isNaN(retryAfter) ? null : new Date(now().getTime() + Math.min(delay, retryAfter));
    // Kept for retry even when waiting alone will not mend it (a refused token or permission
    // is mended by the merchant, and must not lose a paid resolve): the merchant is told.
    const lasting = result === null || !result.error.retryable;
    if (lasting) log.error("Shopify refused the call; will retry", { attempts, reason, retryInMs: delay });
    else log.warn("Shopify call failed; will retry", { attempts, reason, retryInMs: delay });
    const refused = refusedWords(reason);
    const keep = pass !== undefined && result !== null && result.error.kind === "timeout";
    await recordRetry(deps.sql, {
      messageId: message.id,
      claim: message.lockedBy!,
      attempts,
      lastError: reason,
      nextAttemptAt: new Date(now().getTime() + delay),
      heldUntil,
      at: now(),
      keptClaim: keep ? pass.keptClaim : null,
      flagPayment:
        lasting && message.paymentId && PAYMENT_OUTCOMES[payload.kind]
          ? {
              id: message.paymentId,
              call: payload.kind,
              detail: `${refused}, so this payment's outcome has not reached Shopify; the app keeps trying, at most 10 minutes apart. ${reason}`,
            }
          : null,
      followUpRefused:
        lasting && message.paymentId && followUp && !(await followUpRefusalTold(deps, message.paymentId, followUp))
          ? {
              id: message.paymentId,
              call: payload.kind,
              session: followUp.session,
              opening: followUpFlagOpening(followUp),
              detail: retriedFollowUpFlag(followUp, reason).detail,
            }
          : null,
    });
    if (keep) pass.kept();
    return "retry";
  }

  const outcome = result.value;
  const classified = classifyUserErrors(outcome);
  // Shopify refused a pending call because the final one got there while it was on its way:
  // nothing for a person to look at.
  const shopifyFinal = outcome.state?.code === "RESOLVED" || outcome.state?.code === "REJECTED";
  if (!classified.ok && (await supersededPending(shopifyFinal))) {
    log.info("Pending call overtaken by the payment's final outcome", { attempts });
    return "skipped";
  }
  const verdict = paidTwice && !classified.ok ? { ...classified, message: `${paidTwice.note} Shopify said: ${classified.message}` } : classified;
  const paymentOutcome = PAYMENT_OUTCOMES[sent.kind];
  await recordDelivery(deps.sql, {
    messageId: message.id,
    claim: message.lockedBy!,
    attempts,
    status: verdict.ok ? "done" : "failed",
    lastError: verdict.ok ? null : verdict.message,
    result: JSON.stringify({ ...(sent.kind !== payload.kind ? { sent: sent.kind } : {}), state: outcome.state, redirectUrl: outcome.redirectUrl, userErrors: outcome.userErrors }),
    at: now(),
    payment:
      message.paymentId && paymentOutcome
        ? {
            id: message.paymentId,
            answer: verdict.ok
              ? {
                  accepted: true,
                  outcome: paymentOutcome,
                  state: outcome.state?.code ?? null,
                  redirectUrl: outcome.redirectUrl,
                  alreadyInState: verdict.alreadyInState,
                  ...(paidTwice ? { paidTwice: { siblingShopifyPaymentId: paidTwice.siblingShopifyPaymentId, detail: paidTwice.note } } : {}),
                }
              : { accepted: false, call: payload.kind, message: verdict.message, ...(sent.kind === "payment.resolve" ? { flagDetail: refusedResolveDetail(verdict.message) } : {}) },
          }
        : null,
    followUp: followUp
      ? {
          requestId: FOLLOW_UP_KEY.exec(message.dedupeKey)?.[1] ?? null,
          status: verdict.ok ? (followUp.accepted ? "resolved" : "rejected") : "failed",
          payment: message.paymentId
            ? {
                id: message.paymentId,
                call: payload.kind,
                session: followUp.session,
                answer: verdict.ok
                  ? { accepted: true, state: outcome.state?.code ?? null, alreadyInState: verdict.alreadyInState, flagOpening: followUpFlagOpening(followUp) }
                  : {
                      accepted: false,
                      message: verdict.message,
                      flagOpening: followUpFlagOpening(followUp),
                      flagDetail: refusedFollowUpFlag(followUp, verdict.message).detail,
                    },
              }
            : null,
        }
      : null,
  });
  if (verdict.ok) log.info("Shopify call delivered", { attempts, alreadyInState: verdict.alreadyInState });
  else log.error("Shopify refused the call", { attempts, reason: verdict.message });
  return verdict.ok ? "done" : "failed";
}

/**
 * Shopify resolves at most one payment session of a checkout. A shopper who paid one crypto
 * order, went back and paid another for the same checkout has paid twice: when Shopify refused
 * this one's resolve and the app holds another payment of the checkout as resolved, this one's
 * session is rejected (else it would stay pending, as it may have been told), and the merchant
 * is told to refund its crypto.
 */
interface PaidTwice {
  reject: OutboxPayload;
  siblingShopifyPaymentId: string;
  note: string;
}

/**
 * What the other payments of a payment's checkout (its shop and group) say of a resolve Shopify
 * refused: `paidTwice` when one of them is resolved; else `resolveOnItsWay` when one has its
 * resolve queued or on its way (Shopify may have taken it a moment ago, before the app recorded
 * it). Null when the payment is gone.
 */
async function otherPaymentsOfCheckout(deps: PaymentsDeps, paymentId: string, gid: string): Promise<{ paidTwice: PaidTwice | null; resolveOnItsWay: boolean } | null> {
  const payment = await deps.db.payment.findUnique({ where: { id: paymentId }, select: { shopId: true, groupId: true } });
  if (!payment) return null;
  const others = await deps.db.payment.findMany({
    where: { shopId: payment.shopId, groupId: payment.groupId, id: { not: paymentId } },
    select: { id: true, shopifyPaymentId: true, shopifyOutcome: true },
  });
  const resolved = others.find((other) => other.shopifyOutcome === "resolved");
  if (resolved) {
    return {
      paidTwice: {
        reject: { kind: "payment.reject", gid, code: "PROCESSING_ERROR", merchantMessage: PAID_TWICE_MERCHANT_MESSAGE },
        siblingShopifyPaymentId: resolved.shopifyPaymentId,
        note: `Another crypto payment of this checkout (Shopify payment ${resolved.shopifyPaymentId}) was already accepted, so the shopper paid twice: refund this payment's crypto from the gateway dashboard.`,
      },
      resolveOnItsWay: false,
    };
  }
  if (others.length === 0) return { paidTwice: null, resolveOnItsWay: false };
  // Not one Shopify refused in turn while waiting for another: two resolves refused for another
  // reason (a third session completed the checkout) would otherwise wait for each other for ever.
  const queued = await deps.db.outboxMessage.count({
    where: {
      dedupeKey: { in: others.map((other) => finalMessageKey(other.id)) },
      kind: "payment.resolve",
      status: "pending",
      OR: [{ lastError: null }, { lastError: { not: RESOLVE_REFUSED_WHILE_ANOTHER_ON_ITS_WAY } }],
    },
  });
  return { paidTwice: null, resolveOnItsWay: queued > 0 };
}

/**
 * The flag of a paid payment whose resolve Shopify refused for good: the crypto arrived, and
 * Shopify does not show the order paid. It takes the place of any other flag (the timeline keeps
 * the earlier one): whatever that one said, the whole payment is now a person's to settle.
 */
function refusedResolveDetail(message: string): string {
  return `The crypto was received at the gateway, but Shopify did not mark this payment paid. ${asSentence(message)} Check the order in Shopify: if it is not to be paid, the crypto is the shopper's, to refund from the gateway dashboard.`;
}

/** What Shopify shows the merchant on a paid session rejected because another of its checkout was accepted. */
const PAID_TWICE_MERCHANT_MESSAGE = "Another crypto payment of this checkout was already accepted; this second payment must be refunded from the gateway dashboard.";

/** The payment's Shopify outcome each call records; the other calls leave the payment as it is. */
const PAYMENT_OUTCOMES: Partial<Record<OutboxPayload["kind"], "resolved" | "rejected" | "pending">> = {
  "payment.resolve": "resolved",
  "payment.reject": "rejected",
  "payment.pending": "pending",
};

/**
 * Claims and delivers one message now (the shopper is waiting). Not claimed: "in_flight" while
 * another worker holds it (its answer is moments away), "skipped" while it waits out its
 * backoff (a call that timed out and that its pass keeps until it ends included: nothing is
 * being sent), or how it ended.
 */
export async function deliverNow(deps: PaymentsDeps, messageId: string): Promise<DeliveryResult | "in_flight"> {
  const message = await claim(deps, messageId, `inline-${randomUUID()}`);
  if (!message) {
    const current = await deps.db.outboxMessage.findUnique({ where: { id: messageId }, select: { status: true, lockedBy: true, lockedUntil: true } });
    if (current?.status === "done" || current?.status === "failed") return current.status;
    const sending = current?.status === "pending" && current.lockedUntil !== null && current.lockedUntil > deps.clock.now() && !isKept(current.lockedBy);
    return sending ? "in_flight" : "skipped";
  }
  // The claim is renewed while the delivery runs, as a pass's are: renewing the shop's token
  // and Shopify's answer may together outlast one claim, which another instance's pass would
  // then take and send the same call again.
  return whileRenewing(
    () => renewedClaim(deps, message),
    CLAIM_MS / 3,
    (error) => deps.logger.warn("Could not renew an inline delivery's claim", { outboxId: message.id, error }),
    () => deliverClaimed(deps, message),
  );
}

/** The kinds of the calls that answer a refund, capture or void Shopify asked for. */
const FOLLOW_UP_KINDS: OutboxPayload["kind"][] = ["refund.resolve", "refund.reject", "capture.resolve", "capture.reject", "void.resolve", "void.reject"];

/**
 * Sends a payment's final call now when it is waiting out its backoff after failures (up to 10
 * minutes): the merchant has mended the cause (granted a missing permission) and asks for it.
 * The payment's answers to refunds, captures and voids still waiting go next, in the order
 * they were stored, once its final call is through. Null when the payment has no final call
 * still to deliver; "held" while it waits out a wait Shopify asked for (heldUntil), which
 * nothing hurries: Shopify would only refuse it again.
 */
export async function retryFinalCallNow(deps: PaymentsDeps, paymentId: string): Promise<DeliveryResult | "in_flight" | "held" | null> {
  const now = deps.clock.now();
  const key = finalMessageKey(paymentId);
  await deps.db.outboxMessage.updateMany({ where: { dedupeKey: key, status: "pending", nextAttemptAt: { gt: now }, ...notHeld(now) }, data: { nextAttemptAt: now } });
  const message = await deps.db.outboxMessage.findUnique({ where: { dedupeKey: key }, select: { id: true, status: true, heldUntil: true } });
  if (message?.status === "pending" && message.heldUntil !== null && message.heldUntil > now) return "held";
  const final = message?.status === "pending" ? await deliverNow(deps, message.id) : null;
  if (final === null || final === "done" || final === "failed") await retryFollowUpsNow(deps, paymentId);
  return final;
}

/** Messages not waiting out a wait Shopify asked for. */
function notHeld(now: Date) {
  return { OR: [{ heldUntil: null }, { heldUntil: { lte: now } }] };
}

/** Sends the payment's answers to refunds, captures and voids now, those waiting out a backoff included (not a wait Shopify asked for). */
async function retryFollowUpsNow(deps: PaymentsDeps, paymentId: string): Promise<void> {
  const now = deps.clock.now();
  const waiting = { paymentId, kind: { in: FOLLOW_UP_KINDS }, status: "pending" };
  await deps.db.outboxMessage.updateMany({ where: { ...waiting, nextAttemptAt: { gt: now }, ...notHeld(now) }, data: { nextAttemptAt: now } });
  const messages = await deps.db.outboxMessage.findMany({ where: waiting, orderBy: [{ createdAt: "asc" }, { id: "asc" }], select: { id: true } });
  for (const message of messages) await deliverNow(deps, message.id);
}

/**
 * The most messages of one shop a pass takes: a shop whose calls hang until they time out, or
 * that has a backlog, never fills a pass and keeps other shops' calls waiting. A shop alone
 * with calls due and none pending that was tried before (a burst of new payments) fills the
 * pass: the share only lengthens its backlog then. One whose calls hang has calls tried
 * before, waiting out their backoff, so its share holds.
 */
const SHOP_SHARE = 10;

/**
 * Claims up to `limit` due messages, shared between the shops: at most `perShop` of each
 * shop, oldest first, and every shop's first before any shop's second when there are more
 * than `limit` (chosen in one statement). One conditional update then claims the rows and
 * returns those it won, so a concurrent worker (or another instance's pass) never gets the
 * same message, and a crashed pass's claims expire after CLAIM_MS. The messages come
 * back in the order the pass starts them: each shop's first, then each shop's second...,
 * each shop's (and so each payment's) in the order they were stored.
 */
async function claimDue(deps: PaymentsDeps, claimId: string, limit: number, perShop: number): Promise<{ claimed: OutboxMessage[]; more: boolean }> {
  const now = deps.clock.now();
  const due = await deps.sql.query<{ id: string; turn: number | bigint; alone: boolean | number; fresh: boolean | number }>(Prisma.sql`
    SELECT "id", "turn", "alone", "fresh" FROM (
      SELECT "id", "createdAt", "fresh", ROW_NUMBER() OVER (PARTITION BY "shopDomain" ORDER BY "createdAt", "id") AS "turn",
        MIN("shopDomain") OVER () = MAX("shopDomain") OVER () AS "alone"
      FROM (
        -- Whether any of the shop's pending calls was tried before, due or not: one pass over them.
        SELECT "id", "createdAt", "shopDomain", "nextAttemptAt", "lockedUntil", MAX("attempts") OVER (PARTITION BY "shopDomain") = 0 AS "fresh"
        FROM "OutboxMessage"
        WHERE "status" = 'pending'
      ) AS "pending"
      WHERE "nextAttemptAt" <= ${now} AND ("lockedUntil" IS NULL OR "lockedUntil" < ${now})
    ) AS "due"
    WHERE "turn" <= ${perShop} OR ("alone" AND "fresh")
    ORDER BY "turn", "createdAt", "id"
    LIMIT ${limit}`);
  if (due.length === 0) return { claimed: [], more: false };
  // A full batch, or a shop's whole share where the share held, may have left due messages behind.
  const more = due.length >= limit || due.some((row) => Number(row.turn) >= perShop && !(Number(row.alone) && Number(row.fresh)));
  // Still due as the claim is written: another instance may have tried one since the select and
  // put it back to wait (Shopify's Retry-After, a backoff), which this pass must not cut short.
  const claimed = await deps.db.outboxMessage.updateManyAndReturn({
    where: { status: "pending", nextAttemptAt: { lte: now }, OR: [{ lockedUntil: null }, { lockedUntil: { lt: now } }], id: { in: due.map((message) => message.id) } },
    data: { lockedBy: claimId, lockedUntil: new Date(now.getTime() + CLAIM_MS) },
  });
  // In the order the statement chose them: by turn, then age.
  const place = new Map(due.map((row, index) => [row.id, index]));
  return { claimed: claimed.sort((a, b) => place.get(a.id)! - place.get(b.id)!), more };
}

/**
 * Renews the pass's claim on a message just before its call, while the pass still holds it:
 * null when it is gone (it lapsed and another pass took the message, which sends the call).
 */
async function renewedClaim(deps: PaymentsDeps, message: OutboxMessage): Promise<OutboxMessage | null> {
  const [held] = await deps.db.outboxMessage.updateManyAndReturn({
    where: { id: message.id, lockedBy: message.lockedBy, status: "pending" },
    data: { lockedUntil: new Date(deps.clock.now().getTime() + CLAIM_MS) },
  });
  return held ?? null;
}

/** Gives back claimed messages this pass did not get to (the delivery of an earlier message of the same payment crashed, or its claim was lost). */
async function release(deps: PaymentsDeps, messages: OutboxMessage[], claimId: string): Promise<void> {
  if (messages.length === 0) return;
  await deps.db.outboxMessage.updateMany({ where: { id: { in: messages.map((m) => m.id) }, lockedBy: claimId, status: "pending" }, data: { lockedBy: null, lockedUntil: null } });
}

/**
 * Runs `work` on each group in the order given, `concurrency` at once but, while other shops'
 * groups wait, at most `perShop` of one shop at once (a group whose shop has its fill waits,
 * and the next groups go first).
 * Every group's work has ended when this ends; the first failure is thrown then.
 */
async function runShared<T>(groups: Iterable<T>, shopOf: (group: T) => string, concurrency: number, perShop: number, work: (group: T) => Promise<void>): Promise<void> {
  const waiting = [...groups];
  const busy = new Map<string, number>();
  const failures: unknown[] = [];
  let running = 0;
  await new Promise<void>((resolve) => {
    const startNext = () => {
      for (let index = 0; index < waiting.length && running < concurrency; ) {
        const shop = shopOf(waiting[index]!);
        // Only while another shop's waiting work could start: alone, a shop's backlog takes every slot.
        if ((busy.get(shop) ?? 0) >= perShop && waiting.some((group) => shopOf(group) !== shop && (busy.get(shopOf(group)) ?? 0) < perShop)) {
          index++;
          continue;
        }
        const [group] = waiting.splice(index, 1);
        running++;
        busy.set(shop, (busy.get(shop) ?? 0) + 1);
        void work(group!)
          .catch((error: unknown) => void failures.push(error))
          .finally(() => {
            running--;
            busy.set(shop, busy.get(shop)! - 1);
            startNext();
          });
      }
      // Nothing running leaves nothing waiting: with every shop's count at zero, the first waiting group starts.
      if (running === 0) resolve();
    };
    startNext();
  });
  if (failures.length > 0) throw failures[0];
}

/**
 * One pass of the outbox worker: claims up to `limit` due messages at once (at most `perShop`
 * of one shop) and delivers them, several payments at once (each Shopify call is a network
 * round trip) but one payment's messages in the order they were stored, so a pending never
 * overtakes the resolve or reject that follows it (a pending retried after a final call is
 * delivered is dropped as superseded). While other shops' calls wait, one shop's take at most
 * half the pass's concurrency at once (at least one), so a shop whose calls hang leaves the
 * other shops slots.
 *
 * The pass renews its claims every third of CLAIM_MS while it runs (Shopify answering slowly
 * makes a pass outlast one claim), and renews each message's claim again just before its
 * call, skipping the message when the claim is gone: another pass took it and sends the call.
 * A pass whose process dies stops renewing, and its claims expire after CLAIM_MS. A call that
 * timed out stays claimed until the pass ends, under a claim that tells it is not being sent,
 * so no other pass tries it again while the pass that tried it is still running (the pass
 * itself does not either); a shopper's return or "Check now" may send it once it is due.
 * Every delivery of the pass ends before the pass does, and the pass then gives back what it
 * still holds (and only what is still its own), with no statement when it holds nothing.
 */
export async function deliverDueMessages(
  deps: PaymentsDeps,
  options: { worker: string; limit?: number; concurrency?: number; perShop?: number },
): Promise<Record<DeliveryResult, number>> {
  return (await deliveryPass(deps, options)).counts;
}

/**
 * One pass of the outbox worker (deliverDueMessages), and whether it may have left due
 * messages behind (a full batch, or a shop's whole share): the worker then runs the next
 * pass at once, so one shop's backlog is worked off as fast as before the shares. Once
 * `stopping` says so, it starts no more calls and gives back the messages it has not begun.
 */
export async function deliveryPass(
  deps: PaymentsDeps,
  options: { worker: string; limit?: number; concurrency?: number; perShop?: number; stopping?: () => boolean },
): Promise<{ counts: Record<DeliveryResult, number>; more: boolean }> {
  const counts: Record<DeliveryResult, number> = { done: 0, failed: 0, retry: 0, skipped: 0 };
  const claimId = `${options.worker}/${randomUUID()}`;
  const { claimed, more } = await claimDue(deps, claimId, options.limit ?? 50, options.perShop ?? SHOP_SHARE);
  if (claimed.length === 0) return { counts, more };
  const claimedAt = deps.clock.now().getTime();
  const inOrder = Map.groupBy(claimed, (message) => message.paymentId ?? message.id);
  // One access token lookup per shop for the whole pass, not one per message.
  const clients = new Map<string, ReturnType<ShopifyDirectory["forShop"]>>();
  const forShop = (shopDomain: string) => clients.get(shopDomain) ?? clients.set(shopDomain, deps.shopify.forShop(shopDomain)).get(shopDomain)!;
  const pass: PaymentsDeps = { ...deps, shopify: { forShop } };
  const keptClaim = keptClaimOf(claimId);
  const ours = { lockedBy: { in: [claimId, keptClaim] }, status: "pending" };
  // The messages the pass still holds: neither recorded nor given back yet, or kept after their call timed out.
  const holding = new Set(claimed.map((message) => message.id));
  const letGo = (messages: OutboxMessage[]) => messages.forEach((message) => holding.delete(message.id));
  /** The messages of a payment the pass will not get to, given back; when that fails, the pass's end gives them back. */
  const giveBack = async (messages: OutboxMessage[]) => {
    try {
      await release(deps, messages, claimId);
      letGo(messages);
    } catch (error) {
      deps.logger.error("Could not give back the outbox messages a pass will not get to", { outboxIds: messages.map((m) => m.id), error });
    }
  };
  const deliverPayment = async (messages: OutboxMessage[]) => {
    for (const [index, message] of messages.entries()) {
      // The workers are stopping: no call is started any more, and the rest go back at once.
      if (options.stopping?.()) {
        await giveBack(messages.slice(index));
        return;
      }
      try {
        // Within the first half of the claim the pass took, nobody else can hold it: no write needed.
        const claim = deps.clock.now().getTime() - claimedAt < CLAIM_MS / 2 ? message : await renewedClaim(deps, message);
        if (!claim) {
          deps.logger.info("Outbox message claimed by another pass before its call; left to it", { outboxId: message.id });
          counts.skipped++;
          letGo([message]);
          await giveBack(messages.slice(index + 1));
          return;
        }
        let kept = false;
        counts[await deliverClaimed(pass, claim, { keptClaim, kept: () => void (kept = true) })]++;
        if (!kept) letGo([message]);
      } catch (error) {
        deps.logger.error("Outbox delivery crashed", { outboxId: message.id, error });
        counts.retry++;
        // Given back only while this pass still holds it: another worker may have claimed it since.
        // When the give-back fails too, the claim is left to expire (CLAIM_MS after the pass ends).
        // Counted as an attempt (the call may have gone out before the crash), with the same
        // backoff as a failed call: a message that crashes every time (one whose payload no
        // longer parses, say) is tried less and less often, and the health page lists it with
        // its error once it has failed a few times in a row, as it lists a call Shopify keeps refusing.
        letGo([message]);
        try {
          const attempts = message.attempts + 1;
          await deps.db.outboxMessage.updateMany({
            where: { id: message.id, lockedBy: message.lockedBy, status: "pending" },
            data: {
              lockedUntil: null,
              lockedBy: null,
              attempts: { increment: 1 },
              lastError: `The app failed while sending this call: ${String(error)}`.slice(0, CRASH_ERROR_MAX),
              nextAttemptAt: new Date(deps.clock.now().getTime() + backoffMs(attempts, OUTBOX_BACKOFF, Math.random, null)),
            },
          });
        } catch (giveBackError) {
          deps.logger.error("Could not give back a crashed outbox delivery; its claim expires", { outboxId: message.id, error: giveBackError });
        }
        await giveBack(messages.slice(index + 1));
        return;
      }
    }
  };
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const giveBackAll = () => deps.db.outboxMessage.updateMany({ where: ours, data: { lockedBy: null, lockedUntil: null } });
  try {
    await whileRenewing(
      () => deps.db.outboxMessage.updateMany({ where: ours, data: { lockedUntil: new Date(deps.clock.now().getTime() + CLAIM_MS) } }),
      CLAIM_MS / 3,
      (error) => deps.logger.warn("Could not renew the outbox pass's claims", { error }),
      () => runShared(inOrder.values(), (messages) => messages[0]!.shopDomain, concurrency, Math.max(1, Math.floor(concurrency / 2)), deliverPayment),
    );
  } catch (error) {
    // Every delivery has ended (runShared waits for them all): nothing the pass holds is on its way to Shopify.
    await giveBackAll().catch((releaseError: unknown) => deps.logger.error("Could not give back the outbox pass's claims; they expire", { error: releaseError }));
    throw error;
  }
  // The calls that timed out, kept until now, and any message the pass did not get to.
  if (holding.size > 0) await deps.db.outboxMessage.updateMany({ where: { ...ours, id: { in: [...holding] } }, data: { lockedBy: null, lockedUntil: null } });
  return { counts, more };
}
