// The two writes every payment session commits, as plain SQL: the payment recorded with its
// first event before the gateway is called, and the answer stored with its event before
// Shopify gets it. Each is one atomic write: a single statement on PostgreSQL (the event is
// inserted by a data-modifying WITH from the row just written), a two-statement transaction
// on SQLite (which has no data-modifying WITH). Compiled model queries with nested writes
// cost two to three times as much here (see BENCHMARKS.md); on PostgreSQL the statements
// also skip the client and go straight to its pool (`PlainSql`).
import { randomFillSync } from "node:crypto";
import { monotonicFactory } from "ulid";
import { Prisma, type Payment } from "../../generated/prisma/sqlite/client";
import { assignments, insertWhere, timeValue, type PlainSql } from "~/db/plain-sql.server";

/**
 * The ulid's random part from a pool of cryptographic random bytes, refilled 4 KiB at a time.
 * ulid's own generator asks the system for one byte per character, 16 calls per id, which
 * showed in the session's CPU profile. A byte / 256 picks each of the 32 characters equally.
 */
const randomPool = Buffer.alloc(4096);
let poolAt = randomPool.length;
function pooledRandom(): number {
  if (poolAt === randomPool.length) {
    randomFillSync(randomPool);
    poolAt = 0;
  }
  return randomPool[poolAt++]! / 256;
}

/**
 * Ids that sort in creation order, like the model's cuid (the timeline orders events by time,
 * then id), in lower case so they fit the return links' id pattern.
 */
const nextUlid = monotonicFactory(pooledRandom);
export const newRowId = (): string => nextUlid().toLowerCase();

/** The columns a new session's payment row sets; the others keep their defaults (null). */
export type NewSessionPayment = Pick<
  Payment,
  | "shopId"
  | "shopifyPaymentId"
  | "gid"
  | "groupId"
  | "amount"
  | "currency"
  | "test"
  | "kind"
  | "cancelUrl"
  | "merchantLocale"
  | "gatewayEnv"
  | "state"
  | "createdAt"
  | "sessionClaimUntil"
  | "sessionClaimToken"
  | "orderRequestedAt"
  | "customerEmail"
  | "customerName"
  | "customerPhone"
  | "billingAddress"
  | "lastCheckedAt"
>;

/** What storing a session's answer may set besides the answer itself. */
export type AnswerColumns = Partial<
  Pick<
    Payment,
    | "gatewayOrderId"
    | "gatewayStatus"
    | "gatewayWebUrl"
    | "inputCurrency"
    | "cryptoAmount"
    | "paymentUri"
    | "address"
    | "tagMemo"
    | "expiresAt"
    | "attention"
    | "attentionDetail"
    | "orderRequestedAt"
  >
>;

/**
 * An event detail that depends on the payment's row as the write left it: `then` when
 * `condition` (an expression over the payment's columns) holds after the write, else `otherwise`.
 */
export interface DetailByRow {
  condition: Prisma.Sql;
  then: string;
  otherwise: string;
}

export interface SessionEvent {
  type: string;
  detail: string | DetailByRow;
  at: Date;
}

/**
 * Runs `write` (an INSERT or UPDATE of one payment row) and inserts `event` for that payment
 * when the write touched it, atomically; the number of rows written (0 or 1). `alongside`:
 * other statements (UPDATE or INSERT) committed with them, all or nothing.
 */
export async function writeWithEvent(sql: PlainSql, write: Prisma.Sql, paymentId: string, event: SessionEvent, alongside: Prisma.Sql[] = []): Promise<number> {
  // The written row's columns: its id, and whether the detail's condition holds on it.
  const byRow = typeof event.detail === "string" ? null : event.detail;
  const columns = byRow ? Prisma.sql`"id", (${byRow.condition}) AS "holds"` : Prisma.sql`"id"`;
  const detail = byRow ? Prisma.sql`CASE WHEN "written"."holds" THEN ${byRow.then} ELSE ${byRow.otherwise} END` : Prisma.sql`${event.detail}`;
  const insertEvent = (written: Prisma.Sql, others: Prisma.Sql[] = []) => Prisma.sql`
    WITH ${Prisma.join([...others, Prisma.sql`"written" AS (${written})`], ", ")}
    INSERT INTO "PaymentEvent" ("id", "paymentId", "type", "detail", "at")
    SELECT ${newRowId()}, "written"."id", ${event.type}, ${detail}, ${timeValue(sql.kind, event.at)} FROM "written"`;
  if (sql.kind === "postgresql") {
    // One statement: the other writes are data-modifying WITHs beside the payment's. RETURNING
    // gives the row as the write left it.
    const others = alongside.map((statement, index) => Prisma.sql`${Prisma.raw(`"alongside${index}"`)} AS (${statement})`);
    return sql.execute(insertEvent(Prisma.sql`${write} RETURNING ${columns}`, others));
  }
  // SQLite: the write, the event if the write touched the row, then the other writes, in one
  // transaction (so the write's conditions see the other rows as they were, as on PostgreSQL).
  // changes() is what the statement just before wrote: a transaction's statements share one
  // connection, and a conditional write may leave the row there untouched.
  const counts = await sql.executeInTransaction([
    write,
    insertEvent(Prisma.sql`SELECT ${columns} FROM "Payment" WHERE "id" = ${paymentId} AND changes() > 0`),
    ...alongside,
  ]);
  return counts[0] ?? 0;
}

/**
 * Records a new session's payment and its first event, unless the shop already has a payment
 * with this Shopify id (a duplicate or concurrent request), or `onlyIf` (a condition on other
 * rows, checked in the same statement) does not hold: then nothing is written and the answer
 * is null. `id` is the new row's, when the caller needs it before the row is written.
 */
export async function insertSessionPayment(
  sql: PlainSql,
  row: NewSessionPayment,
  event: SessionEvent,
  options: { id?: string; onlyIf?: Prisma.Sql } = {},
): Promise<{ id: string } | null> {
  const id = options.id ?? newRowId();
  // updatedAt is the wall clock, as the model's @updatedAt writes it (createdAt is the injected clock).
  const columns = { id, ...row, updatedAt: new Date() };
  const insert = Prisma.sql`${insertWhere(sql.kind, "Payment", columns, options.onlyIf)} ON CONFLICT ("shopId", "shopifyPaymentId") DO NOTHING`;
  return (await writeWithEvent(sql, insert, id, event)) === 1 ? { id } : null;
}

/**
 * Stores the answer given to Shopify for a session (replayed on repeats) with its event, and
 * releases the claim, only while the attempt's claim (`claimToken`) still holds and no answer
 * is stored: false when another attempt took the payment over, and then nothing is written.
 * The check is the UPDATE's own condition, so the answer costs no more statements than before.
 */
export async function storeSessionAnswer(
  sql: PlainSql,
  payment: { id: string; claimToken: string },
  answer: { state: string; responseStatus: number; responseBody: string; columns: AnswerColumns },
  event: SessionEvent,
): Promise<boolean> {
  const set = assignments({
    ...answer.columns,
    state: answer.state,
    sessionClaimUntil: null,
    sessionClaimToken: null,
    responseStatus: answer.responseStatus,
    responseBody: answer.responseBody,
    updatedAt: new Date(),
  });
  const update = Prisma.sql`UPDATE "Payment" SET ${set}
    WHERE "id" = ${payment.id} AND "sessionClaimToken" = ${payment.claimToken} AND "responseStatus" IS NULL`;
  return (await writeWithEvent(sql, update, payment.id, event)) === 1;
}
