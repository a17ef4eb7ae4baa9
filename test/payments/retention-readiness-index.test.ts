// The retention purge's outbox step keeps each shop's newest readiness call (app.configure) by
// looking for a later one of the same shop and kind, for every message it may delete, every
// shop's newest call among them (kept for good, so examined by every pass). Without an index
// on those columns each lookup read the whole outbox: the step grew as shops x messages, and
// with a thousand shops and tens of thousands of messages it outran PostgreSQL's statement
// timeout, which ended the pass before the customer data erasure. The lookup is an index
// search on both databases, which their query plans show.
import { createClient } from "@libsql/client";
import { describe, expect, it } from "vitest";
import { openAppDatabase, type AppDatabase } from "../../app/db/database.server";
import { applyMigrations } from "../../app/db/migrate.server";
import type { PlainSql } from "../../app/db/plain-sql.server";
import { silentLogger } from "../../app/lib/logger.server";
import { purgeExpiredRows } from "../../app/payments/retention";
import { Prisma } from "../../generated/prisma/sqlite/client";
import { forThisFile } from "../support/for-this-file";
import { ROW_DATABASES, type RowDatabase } from "../support/row-databases";

const NOW = new Date();
const clock = { now: () => NOW };
const OPTIONS = { retentionDays: 30, customerDataDays: 90 };

/** The statement of the purge's outbox step, as the pass runs it (caught on its way to the database, and not run). */
async function outboxPurgeStatement(app: AppDatabase): Promise<Prisma.Sql> {
  let caught: Prisma.Sql | null = null;
  const watching: PlainSql = {
    ...app.sql,
    execute: async (statement) => {
      if (/DELETE FROM "OutboxMessage"/.test(statement.sql) || /DELETE FROM "OutboxMessage"/.test(statement.text)) {
        caught ??= statement;
        return 0;
      }
      return app.sql.execute(statement);
    },
  };
  await purgeExpiredRows({ db: app.db, sql: watching, clock, logger: silentLogger }, OPTIONS);
  if (!caught) throw new Error("the purge ran no DELETE on OutboxMessage");
  return caught;
}

describe.each(ROW_DATABASES)("on $name", (database: RowDatabase) => {
  const opened = forThisFile(
    `the ${database.name} database`,
    async () => {
      const { url, drop } = await database.open();
      await applyMigrations(url);
      const app = openAppDatabase(url);
      return { app, url, drop };
    },
    async ({ app, drop }) => {
      await app.db.$disconnect();
      await drop();
    },
  );

  it("the outbox purge finds a shop's newer readiness call through an index, not by scanning every message", async () => {
    const { app } = opened();
    const statement = await outboxPurgeStatement(app);
    let plan: string[];
    if (app.sql.kind === "postgresql") {
      // Sequential scans priced out: a plan that still scans "later" has no index to take.
      plan = await app.sql.inTransaction(async (tx) => {
        await tx.execute(Prisma.sql`SET LOCAL enable_seqscan = off`);
        const rows = await tx.query<{ "QUERY PLAN": string }>(Prisma.sql`EXPLAIN ${statement}`);
        return rows.map((row) => row["QUERY PLAN"]);
      });
    } else {
      // On a connection of its own: the plan is only read, never run.
      const client = createClient({ url: opened().url });
      try {
        const args = statement.values.map((value) => (value instanceof Date ? value.toISOString().replace("Z", "+00:00") : value)) as never[];
        const rows = await client.execute({ sql: `EXPLAIN QUERY PLAN ${statement.sql}`, args });
        plan = rows.rows.map((row) => String(row.detail));
      } finally {
        client.close();
      }
    }
    const scansOfLater = plan.filter((line) => /Seq Scan on "OutboxMessage" later|\bSCAN later\b/.test(line));
    expect(scansOfLater, plan.join("\n")).toEqual([]);
  });
});
