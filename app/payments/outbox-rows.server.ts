// What a delivered outbox message leaves behind, as one write in plain SQL: the message
// done (or failed, when Shopify refused it), and for a payment's call, the payment's
// Shopify side and its timeline entry; for an answer to a refund, capture or void, the
// request's final status and its payment's timeline entry. A single statement on
// PostgreSQL, one transaction on SQLite, instead of an interactive transaction of six round
// trips.
import { Prisma } from "../../generated/prisma/sqlite/client";
import { assignments, quotedName, type PlainSql } from "~/db/plain-sql.server";
import { writeWithEvent, type DetailByRow } from "./session-rows.server";
import type { AttentionReason } from "./status-mapping";
import { flagColumns } from "./attention-flags";

/** What Shopify's answer to a payment's call means for the payment. */
export type PaymentAnswer =
  /** Shopify took it: "pending" never replaces a final outcome already recorded. */
  | {
      accepted: true;
      outcome: "resolved" | "rejected" | "pending";
      state: string | null;
      redirectUrl: string | null;
      alreadyInState: boolean;
      /** The session was rejected because another of its checkout was accepted: the payment is flagged so its crypto is refunded. */
      paidTwice?: { siblingShopifyPaymentId: string; detail: string };
    }
  /** Shopify refused it: a person must look. */
  | { accepted: false; call: string; message: string; /** The flag's detail, when it says more than Shopify's words. */ flagDetail?: string };

export interface DeliveryRecord {
  messageId: string;
  /** The claim the delivery was made under (the message's lockedBy): recorded only while it still holds. */
  claim: string;
  attempts: number;
  /** "done", or "failed" when Shopify refused the call. */
  status: "done" | "failed";
  lastError: string | null;
  result: string;
  at: Date;
  /** The payment the call was about, when it was a payment's call. */
  payment: { id: string; answer: PaymentAnswer } | null;
  /** What the call's answer to a refund, capture or void Shopify asked for leaves behind, when it was one. */
  followUp?: FollowUpDelivery | null;
}

/** What Shopify did with the app's answer to a refund, capture or void it asked for. */
export type FollowUpAnswer =
  /** Shopify took it: the flag this call's refusals raised (its detail opens with `flagOpening`) closes. */
  | { accepted: true; state: string | null; alreadyInState: boolean; flagOpening: string }
  /** Shopify refused it for good: a person must look (the flag's detail opens with `flagOpening`). */
  | { accepted: false; message: string; flagOpening: string; flagDetail: string };

export interface FollowUpDelivery {
  /** The request the call answered (its SessionRequest), given its final status: resolved, rejected, or failed when Shopify refused the answer. */
  requestId: string | null;
  status: "resolved" | "rejected" | "failed";
  /** The payment the request named, when the app knows it: the call ("capture.resolve"...), the Shopify session it answered, and Shopify's answer. */
  payment: { id: string; call: string; session: string; answer: FollowUpAnswer } | null;
}

const FINAL_OUTCOMES = Prisma.sql`('resolved', 'rejected')`;

/** The flag a refused payment call raises. */
export const SHOPIFY_ERROR: AttentionReason = "shopify_error";

/** How the flag of a refund, capture or void answer Shopify refused begins (outbox.ts, followUpFlagOpening). */
export const FOLLOW_UP_FLAG_PREFIX = "Shopify has not taken the app's answer to the ";

/** The flag of an authorization voided with crypto already received for it. */
const PAID_AFTER_VOID: AttentionReason = "paid_after_void";

/** The flag of a paid session rejected because another session of its checkout was accepted. */
const PAID_TWICE: AttentionReason = "paid_twice";

/** The payment's update and its timeline entry. */
function paymentWrites(answer: PaymentAnswer, at: Date): { columns: Record<string, unknown>; event: { type: string; detail: string } } {
  if (!answer.accepted) {
    const flag = { reason: SHOPIFY_ERROR, detail: answer.flagDetail ?? answer.message };
    return {
      // A refused final call takes the payment's flag: its outcome did not reach Shopify. A
      // refused pending call only when no flag is open but one of Shopify's calls (its own while
      // it was retried, say): another's advice stands (an order of other terms), and a later
      // read would raise that one again over a handled refusal.
      columns: answer.call === "payment.pending" ? flagWhere(Prisma.sql`(${NO_OPEN_FLAG} OR "attention" = ${SHOPIFY_ERROR})`, flag.detail) : flagColumns(flag),
      event: { type: "shopify_refused", detail: JSON.stringify({ call: answer.call, message: answer.message }) },
    };
  }
  const columns: Record<string, unknown> = answer.outcome === "pending" ? { pendingSentAt: at } : { finalizedAt: at };
  // A late pending answer never overwrites a final one (each CASE reads the row as it was).
  const unlessFinal = (column: string, value: unknown) =>
    answer.outcome === "pending" ? Prisma.sql`CASE WHEN "shopifyOutcome" IN ${FINAL_OUTCOMES} THEN ${quotedName(column)} ELSE ${value} END` : value;
  columns.shopifyOutcome = unlessFinal("shopifyOutcome", answer.outcome);
  columns.shopifyState = unlessFinal("shopifyState", answer.state);
  if (answer.redirectUrl) columns.nextActionUrl = unlessFinal("nextActionUrl", answer.redirectUrl);
  // Shopify took the payment's final outcome: a flag raised while it kept refusing the call
  // (a missing permission since granted, say) has nothing left for a person to do. Not a
  // refund, capture or void answer's refusal, which is about another request.
  if (answer.outcome !== "pending") {
    const ownFlag = Prisma.sql`"attention" = ${SHOPIFY_ERROR} AND "attentionResolvedAt" IS NULL AND NOT ${detailOpensWith(FOLLOW_UP_FLAG_PREFIX)}`;
    columns.attentionResolvedAt = Prisma.sql`CASE WHEN ${ownFlag} THEN ${at} ELSE "attentionResolvedAt" END`;
  }
  if (answer.paidTwice) Object.assign(columns, flagColumns({ reason: PAID_TWICE, detail: answer.paidTwice.detail }));
  const detail = { state: answer.state, alreadyInState: answer.alreadyInState, ...(answer.paidTwice ? { paidTwice: answer.paidTwice.siblingShopifyPaymentId } : {}) };
  return { columns, event: { type: `shopify_${answer.outcome}`, detail: JSON.stringify(detail) } };
}

/** A shopify_error flag's columns, each CASE (reading the row as it was) setting it only where `flaggable` holds. */
function flagWhere(flaggable: Prisma.Sql, detail: string): Record<string, unknown> {
  return {
    attention: Prisma.sql`CASE WHEN ${flaggable} THEN ${SHOPIFY_ERROR} ELSE "attention" END`,
    attentionDetail: Prisma.sql`CASE WHEN ${flaggable} THEN ${detail} ELSE "attentionDetail" END`,
    attentionResolvedAt: Prisma.sql`CASE WHEN ${flaggable} THEN NULL ELSE "attentionResolvedAt" END`,
  };
}

/** Where the payment carries no open flag. */
const NO_OPEN_FLAG = Prisma.sql`("attention" IS NULL OR "attentionResolvedAt" IS NOT NULL)`;

/** Whether the payment's flag detail opens with `words`. */
function detailOpensWith(words: string): Prisma.Sql {
  return Prisma.sql`(substr("attentionDetail", 1, ${Prisma.raw(String(words.length))}) = ${words})`;
}

/** Whether the payment's open flag is the one a follow-up's refusals raised (its detail opens with the words naming the session). */
function ownOpenFlag(opening: string): Prisma.Sql {
  return Prisma.sql`("attention" = ${SHOPIFY_ERROR} AND "attentionResolvedAt" IS NULL AND ${detailOpensWith(opening)})`;
}

/**
 * The flag a refused answer to a refund, capture or void raises, unless the payment carries
 * another open flag, whose advice stands (the timeline entry tells of the refusal either way);
 * the call's own flag, raised while it was retried, takes the new detail. Each CASE reads the
 * row as it was.
 */
function flagUnlessOpen(detail: string, opening: string, replaces: AttentionReason | null = null): Record<string, unknown> {
  const replaced = replaces === null ? Prisma.sql`FALSE` : Prisma.sql`("attention" = ${replaces} AND "attentionResolvedAt" IS NULL)`;
  return flagWhere(Prisma.sql`(${NO_OPEN_FLAG} OR ${ownOpenFlag(opening)} OR ${replaced})`, detail);
}

/**
 * The timeline entry of a follow-up's refused answer, saying whether the refusal's flag is the
 * payment's open one after the write (`flagged`), or another open flag kept it from being
 * raised: the merchant handling that other flag raises it then (outbox.ts, refusalKeptFromItsFlag),
 * and handling the refusal's own flag does not bring it back.
 */
function refusalDetail(refusal: Record<string, unknown>, opening: string): DetailByRow {
  return { condition: ownOpenFlag(opening), then: JSON.stringify({ ...refusal, flagged: true }), otherwise: JSON.stringify({ ...refusal, flagged: false }) };
}

/** The payment's update and its timeline entry once Shopify took or refused a follow-up's answer. */
function followUpWrites(payment: NonNullable<FollowUpDelivery["payment"]>, at: Date): { columns: Record<string, unknown>; event: { type: string; detail: string | DetailByRow } } {
  const { call, session, answer } = payment;
  if (!answer.accepted) {
    // A void Shopify refuses did not end the authorization: the flag that said the crypto had
    // become the shopper's (raised as the void was accepted) no longer holds, and gives way.
    return {
      columns: flagUnlessOpen(answer.flagDetail, answer.flagOpening, call === "void.resolve" ? PAID_AFTER_VOID : null),
      event: { type: "shopify_refused", detail: refusalDetail({ call, session, message: answer.message }, answer.flagOpening) },
    };
  }
  // Only the flag this call's refusals raised closes: another one (the payment's own call,
  // another follow-up) still has its advice to give.
  return {
    columns: { attentionResolvedAt: Prisma.sql`CASE WHEN ${ownOpenFlag(answer.flagOpening)} THEN ${at} ELSE "attentionResolvedAt" END` },
    event: { type: "shopify_answered", detail: JSON.stringify({ call, session, state: answer.state, alreadyInState: answer.alreadyInState }) },
  };
}

/**
 * The message's update after an attempt, made only while the claim still holds. It also gives
 * up the claim, unless asked to keep it under `keptClaim` (the pass that made the attempt
 * gives it back when it ends).
 */
function releasedMessage(attempt: { messageId: string; claim: string; attempts: number; keptClaim?: string | null }, columns: Record<string, unknown>) {
  const stillClaimed = Prisma.sql`"id" = ${attempt.messageId} AND "lockedBy" = ${attempt.claim} AND "status" = 'pending'`;
  const update = Prisma.sql`UPDATE "OutboxMessage" SET ${assignments({
    ...columns,
    attempts: attempt.attempts,
    ...(attempt.keptClaim ? { lockedBy: attempt.keptClaim } : { lockedBy: null, lockedUntil: null }),
    updatedAt: new Date(),
  })} WHERE ${stillClaimed}`;
  return { stillClaimed, update };
}

/**
 * Records a delivered message, atomically, only while the delivery's claim still holds: a
 * delivery slowed past its claim leaves the message (and the payment's timeline) to the
 * worker that claimed it since, whose call Shopify answered the same way. A payment deleted
 * meanwhile (its shop's data erased) leaves the message done alone.
 */
export async function recordDelivery(sql: PlainSql, record: DeliveryRecord): Promise<void> {
  const { stillClaimed, update: message } = releasedMessage(record, {
    status: record.status,
    doneAt: record.at,
    lastError: record.lastError,
    result: record.result,
  });
  if (record.followUp) {
    await recordFollowUp(sql, record.followUp, record.at, stillClaimed, message);
    return;
  }
  if (!record.payment) {
    await sql.execute(message);
    return;
  }
  const { id: paymentId, answer } = record.payment;
  const writes = paymentWrites(answer, record.at);
  // Checked against the message as it was before this write: on PostgreSQL one statement sees
  // one snapshot, and on SQLite the message is written after the payment (writeWithEvent).
  const payment = Prisma.sql`UPDATE "Payment" SET ${assignments({ ...writes.columns, updatedAt: new Date() })}
    WHERE "id" = ${paymentId} AND EXISTS (SELECT 1 FROM "OutboxMessage" WHERE ${stillClaimed})`;
  await writeWithEvent(sql, payment, paymentId, { ...writes.event, at: record.at }, [message]);
}

/**
 * A delivered answer to a refund, capture or void: the request's final status, the message,
 * and the payment's timeline entry (and flag, when Shopify refused it), together, only while
 * the delivery's claim still holds. The request and the message are written after the payment
 * (on SQLite), so each condition reads the message as it was before this write.
 */
async function recordFollowUp(sql: PlainSql, followUp: FollowUpDelivery, at: Date, stillClaimed: Prisma.Sql, message: Prisma.Sql): Promise<void> {
  const claimHolds = Prisma.sql`EXISTS (SELECT 1 FROM "OutboxMessage" WHERE ${stillClaimed})`;
  const request = followUp.requestId
    ? [Prisma.sql`UPDATE "SessionRequest" SET ${assignments({ status: followUp.status, updatedAt: new Date() })} WHERE "id" = ${followUp.requestId} AND ${claimHolds}`]
    : [];
  if (!followUp.payment) {
    await sql.executeInTransaction([...request, message]);
    return;
  }
  const writes = followUpWrites(followUp.payment, at);
  const payment = Prisma.sql`UPDATE "Payment" SET ${assignments({ ...writes.columns, updatedAt: new Date() })} WHERE "id" = ${followUp.payment.id} AND ${claimHolds}`;
  await writeWithEvent(sql, payment, followUp.payment.id, { ...writes.event, at }, [...request, message]);
}

export interface RetryRecord {
  messageId: string;
  /** The claim the attempt was made under: recorded only while it still holds. */
  claim: string;
  attempts: number;
  lastError: string;
  nextAttemptAt: Date;
  /** The end of the wait Shopify asked for (OutboxMessage.heldUntil); none when it asked for none. */
  heldUntil?: Date | null;
  at: Date;
  /**
   * The claim the message stays under after this attempt, when it stays claimed: a call that
   * timed out in a worker's pass stays the pass's own until the pass ends, so no other pass
   * tries it again meanwhile, under a claim of its own that tells it is not being sent.
   */
  keptClaim?: string | null;
  /**
   * A payment's call that failed in a way waiting alone will not mend (Shopify refused the
   * shop's token or a permission, or the shop has no token): the payment is flagged so the
   * merchant learns why its order does not change in Shopify, once: not while it carries an
   * open flag (the earlier flag's advice still stands, and the health page lists the call), nor
   * again after the merchant marked this one handled (the same words); another call's refusal
   * the merchant handled does not keep it back.
   */
  flagPayment: { id: string; call: string; detail: string } | null;
  /**
   * An answer to a refund, capture or void that Shopify refuses in a way waiting alone will not
   * mend: its payment's timeline says so, and the payment is flagged unless another flag is
   * open. Given once per call (the caller looks for the entry first), not at every attempt.
   */
  followUpRefused?: { id: string; call: string; session: string; opening: string; detail: string } | null;
}

/** Records a failed attempt that will be tried again, and flags its payment when asked. */
export async function recordRetry(sql: PlainSql, record: RetryRecord): Promise<void> {
  const { stillClaimed, update: message } = releasedMessage(record, { lastError: record.lastError, nextAttemptAt: record.nextAttemptAt, heldUntil: record.heldUntil ?? null });
  if (record.followUpRefused) {
    const { id: paymentId, call, session, opening, detail } = record.followUpRefused;
    const flag = Prisma.sql`UPDATE "Payment" SET ${assignments({ ...flagUnlessOpen(detail, opening), updatedAt: new Date() })}
      WHERE "id" = ${paymentId} AND EXISTS (SELECT 1 FROM "OutboxMessage" WHERE ${stillClaimed})`;
    const event = { type: "shopify_refused", detail: refusalDetail({ call, session, message: record.lastError, retrying: true }, opening), at: record.at };
    await writeWithEvent(sql, flag, paymentId, event, [message]);
    return;
  }
  if (!record.flagPayment) {
    await sql.execute(message);
    return;
  }
  const { id: paymentId, call, detail } = record.flagPayment;
  const flag = Prisma.sql`UPDATE "Payment" SET ${assignments({ ...flagColumns({ reason: SHOPIFY_ERROR, detail }), updatedAt: new Date() })}
    WHERE "id" = ${paymentId} AND ("attention" IS NULL OR ("attentionResolvedAt" IS NOT NULL AND NOT ("attention" = ${SHOPIFY_ERROR} AND "attentionDetail" = ${detail})))
      AND EXISTS (SELECT 1 FROM "OutboxMessage" WHERE ${stillClaimed})`;
  await writeWithEvent(sql, flag, paymentId, { type: "shopify_refused", detail: JSON.stringify({ call, message: record.lastError, retrying: true }), at: record.at }, [message]);
}
