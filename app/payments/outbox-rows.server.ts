// What a delivered outbox message leaves behind, as one write in plain SQL: the message
// done (or failed, when Shopify refused it), and for a payment's call, the payment's
// Shopify side and its timeline entry. A single statement on PostgreSQL, one transaction
// on SQLite, instead of an interactive transaction of six round trips.
import { Prisma } from "../../generated/prisma/sqlite/client";
import { assignments, quotedName, type PlainSql } from "~/db/plain-sql.server";
import { writeWithEvent } from "./session-rows.server";

/** What Shopify's answer to a payment's call means for the payment. */
export type PaymentAnswer =
  /** Shopify took it: "pending" never replaces a final outcome already recorded. */
  | { accepted: true; outcome: "resolved" | "rejected" | "pending"; state: string | null; redirectUrl: string | null; alreadyInState: boolean }
  /** Shopify refused it: a person must look. */
  | { accepted: false; call: string; message: string };

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
}

const FINAL_OUTCOMES = Prisma.sql`('resolved', 'rejected')`;

/** The flag a refused payment call raises. */
const SHOPIFY_ERROR = "shopify_error";

/** The payment's update and its timeline entry. */
function paymentWrites(answer: PaymentAnswer, at: Date): { columns: Record<string, unknown>; event: { type: string; detail: string } } {
  if (!answer.accepted) {
    return {
      columns: { attention: SHOPIFY_ERROR, attentionDetail: answer.message, attentionResolvedAt: null },
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
  // (a missing permission since granted, say) has nothing left for a person to do.
  if (answer.outcome !== "pending") {
    columns.attentionResolvedAt = Prisma.sql`CASE WHEN "attention" = ${SHOPIFY_ERROR} AND "attentionResolvedAt" IS NULL THEN ${at} ELSE "attentionResolvedAt" END`;
  }
  return { columns, event: { type: `shopify_${answer.outcome}`, detail: JSON.stringify({ state: answer.state, alreadyInState: answer.alreadyInState }) } };
}

/** The message's update after an attempt, which also gives up its claim, made only while the claim still holds. */
function releasedMessage(attempt: { messageId: string; claim: string; attempts: number }, columns: Record<string, unknown>) {
  const stillClaimed = Prisma.sql`"id" = ${attempt.messageId} AND "lockedBy" = ${attempt.claim} AND "status" = 'pending'`;
  const update = Prisma.sql`UPDATE "OutboxMessage" SET ${assignments({
    ...columns,
    attempts: attempt.attempts,
    lockedBy: null,
    lockedUntil: null,
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

export interface RetryRecord {
  messageId: string;
  /** The claim the attempt was made under: recorded only while it still holds. */
  claim: string;
  attempts: number;
  lastError: string;
  nextAttemptAt: Date;
  at: Date;
  /**
   * A payment's call that failed in a way waiting alone will not mend (Shopify refused the
   * shop's token or a permission, or the shop has no token): the payment is flagged so the
   * merchant learns why its order does not change in Shopify, once: not while it carries an
   * open flag (the earlier flag's advice still stands, and the health page lists the call), nor
   * again after the merchant marked this one handled.
   */
  flagPayment: { id: string; call: string; detail: string } | null;
}

/** Records a failed attempt that will be tried again, and flags its payment when asked. */
export async function recordRetry(sql: PlainSql, record: RetryRecord): Promise<void> {
  const { stillClaimed, update: message } = releasedMessage(record, { lastError: record.lastError, nextAttemptAt: record.nextAttemptAt });
  if (!record.flagPayment) {
    await sql.execute(message);
    return;
  }
  const { id: paymentId, call, detail } = record.flagPayment;
  const flag = Prisma.sql`UPDATE "Payment" SET ${assignments({ attention: SHOPIFY_ERROR, attentionDetail: detail, attentionResolvedAt: null, updatedAt: new Date() })}
    WHERE "id" = ${paymentId} AND ("attention" IS NULL OR ("attentionResolvedAt" IS NOT NULL AND "attention" <> ${SHOPIFY_ERROR}))
      AND EXISTS (SELECT 1 FROM "OutboxMessage" WHERE ${stillClaimed})`;
  await writeWithEvent(sql, flag, paymentId, { type: "shopify_refused", detail: JSON.stringify({ call, message: record.lastError, retrying: true }), at: record.at }, [message]);
}
