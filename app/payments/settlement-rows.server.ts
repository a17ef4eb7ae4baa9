// The one write of a settlement, as plain SQL: the payment moved from the row the
// settlement was decided on, its timeline entries, the on-chain transactions the gateway
// reported and the final Shopify call, all or nothing. On PostgreSQL it is a single
// statement (the inserts are data-modifying WITHs gated on the payment's update), one round
// trip; on SQLite, which has no data-modifying WITH, a transaction on the one connection.
// The interactive transaction it replaced took about eight round trips per settlement, with
// the payment's row locked for all of them (BENCHMARKS.md, problem 7).
import { Prisma, type Payment } from "../../generated/prisma/sqlite/client";
import { assignments, insertWhere, type PlainSql } from "~/db/plain-sql.server";
import { newRowId } from "./session-rows.server";

/** The payment columns a settlement may set. */
export type SettledColumns = Partial<
  Pick<
    Payment,
    | "state"
    | "gatewayOrderId"
    | "gatewayStatus"
    | "gatewayEditedAt"
    | "inputCurrency"
    | "cryptoAmount"
    | "receivedAmount"
    | "percentage"
    | "address"
    | "tagMemo"
    | "expiresAt"
    | "lastCheckedAt"
    | "unverifiedSince"
    | "attention"
    | "attentionDetail"
    | "attentionResolvedAt"
  >
>;

export interface SettledTransaction {
  txHash: string;
  currency: string;
  amount: string;
  confirmed: boolean;
  block: bigint | null;
  seenAt: Date;
}

export interface SettlementWrite {
  paymentId: string;
  /**
   * The row the settlement was decided on: the write happens only while the payment still has
   * this state, updatedAt and flag. The flag is compared as well because the outbox raises and
   * closes flags in statements of their own, whose updatedAt (the wall clock) may equal the one
   * seen when they land within its millisecond.
   */
  seen: Pick<Payment, "state" | "updatedAt" | "attention" | "attentionDetail" | "attentionResolvedAt">;
  columns: SettledColumns;
  /** The payment's new updatedAt: always later than the seen one, so every settlement is a new version of the row. */
  updatedAt: Date;
  /** Timeline entries, in order (their ids sort the same way), all at `at`. */
  events: { type: string; detail: string }[];
  at: Date;
  /** Inserted, or their confirmation and block updated when already known (a confirmation is never taken back). */
  transactions: SettledTransaction[];
  /** The final Shopify call, unless one with its dedupe key is already stored. */
  message: { shopDomain: string; kind: string; dedupeKey: string; payload: string } | null;
}

export interface SettlementWritten {
  /** The payment's final Shopify call in the outbox (this write's or an earlier one), when the write carried one. */
  messageId: string | null;
}

/** The statements after the payment's update, each written only while `onlyIf` holds. */
function followingInserts(kind: PlainSql["kind"], write: SettlementWrite, onlyIf: Prisma.Sql): Prisma.Sql[] {
  const inserts: Prisma.Sql[] = [];
  if (write.events.length > 0) {
    const rows = write.events.map((event) => ({ id: newRowId(), paymentId: write.paymentId, type: event.type, detail: event.detail, at: write.at }));
    inserts.push(insertWhere(kind, "PaymentEvent", rows, onlyIf));
  }
  // One row per hash (the last report wins): an upsert cannot touch a row twice in one statement.
  // A transaction once confirmed stays so, with its block: a report that lists it unconfirmed
  // was taken before the confirmation, whatever order the reports arrive in.
  const transactions = [...new Map(write.transactions.map((t) => [t.txHash, t])).values()];
  if (transactions.length > 0) {
    const rows = transactions.map((t) => ({ id: newRowId(), paymentId: write.paymentId, ...t }));
    inserts.push(Prisma.sql`${insertWhere(kind, "PaymentTransaction", rows, onlyIf)}
      ON CONFLICT ("paymentId", "txHash") DO UPDATE SET "confirmed" = "PaymentTransaction"."confirmed" OR excluded."confirmed",
        "block" = COALESCE(excluded."block", "PaymentTransaction"."block")`);
  }
  if (write.message) {
    const now = write.updatedAt;
    const row = { id: newRowId(), paymentId: write.paymentId, ...write.message, nextAttemptAt: write.at, createdAt: now, updatedAt: now };
    inserts.push(Prisma.sql`${insertWhere(kind, "OutboxMessage", row, onlyIf)} ON CONFLICT ("dedupeKey") DO NOTHING`);
  }
  return inserts;
}

/**
 * Writes a settlement if the payment is still as it was seen; null when it was not (another
 * writer moved it first: decide again from a fresh read), and nothing is written then.
 */
export async function writeSettlement(sql: PlainSql, write: SettlementWrite): Promise<SettlementWritten | null> {
  const { seen } = write;
  const update = Prisma.sql`UPDATE "Payment" SET ${assignments({ ...write.columns, updatedAt: write.updatedAt })}
    WHERE "id" = ${write.paymentId} AND "state" = ${seen.state} AND "updatedAt" = ${seen.updatedAt}
      AND "attention" IS NOT DISTINCT FROM ${seen.attention} AND "attentionDetail" IS NOT DISTINCT FROM ${seen.attentionDetail}
      AND "attentionResolvedAt" IS NOT DISTINCT FROM ${seen.attentionResolvedAt}`;
  const messageId = (moved: Prisma.Sql) =>
    write.message ? Prisma.sql`(SELECT "id" FROM "OutboxMessage" WHERE "dedupeKey" = ${write.message.dedupeKey} AND ${moved})` : Prisma.sql`NULL`;

  if (sql.kind === "postgresql") {
    // Every WITH sees the rows as they were before the statement, so the message's id is read
    // back from the insert's RETURNING, or from the outbox when it was already there.
    const moved = Prisma.sql`EXISTS (SELECT 1 FROM "moved")`;
    const inserts = followingInserts(sql.kind, write, moved);
    const steps = [Prisma.sql`"moved" AS (${update} RETURNING "id")`, ...inserts.map((insert, index) => Prisma.sql`${Prisma.raw(`"insert${index}"`)} AS (${insert} RETURNING "id")`)];
    const inserted = write.message ? Prisma.raw(`(SELECT "id" FROM "insert${inserts.length - 1}")`) : Prisma.sql`NULL`;
    const [row] = await sql.query<{ moved: boolean; messageId: string | null }>(Prisma.sql`
      WITH ${Prisma.join(steps, ", ")}
      SELECT ${moved} AS "moved", COALESCE(${inserted}, ${messageId(moved)}) AS "messageId"`);
    return row?.moved ? { messageId: row.messageId } : null;
  }

  return sql.inTransaction(async (tx) => {
    if ((await tx.execute(update)) !== 1) return null;
    for (const insert of followingInserts(sql.kind, write, Prisma.sql`TRUE`)) await tx.execute(insert);
    if (!write.message) return { messageId: null };
    const [row] = await tx.query<{ id: string | null }>(Prisma.sql`SELECT ${messageId(Prisma.sql`TRUE`)} AS "id"`);
    return { messageId: row?.id ?? null };
  });
}
