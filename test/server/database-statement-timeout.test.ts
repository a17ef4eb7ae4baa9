// On PostgreSQL a statement that waits on a row lock another session keeps (a process that
// stopped in the middle of a transaction) is cancelled by the server after the statement
// timeout, and the connection is given back to the pool: the request or worker pass fails in
// bounded time and the next one is served, instead of both waiting for ever.
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openAppDatabase, openConfiguredDatabase } from "../../app/db/database.server";
import { applyMigrations } from "../../app/db/migrate.server";
import { parseEnv } from "../../app/config/env.server";
import { Prisma } from "../../generated/prisma/sqlite/client";
import { createTestPostgresDatabase } from "../support/postgres";

let database: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  database = await createTestPostgresDatabase();
  await applyMigrations(database.url);
}, 60_000);

afterAll(() => database.drop());

it("a write waiting on a row lock held elsewhere fails after the statement timeout, and the pool serves the next query", async () => {
  const { db, sql } = openAppDatabase(database.url, { poolSize: 1, statementTimeoutMs: 300 });
  const holder = new pg.Client({ connectionString: database.url });
  await holder.connect();
  try {
    const shop = await db.shop.create({ data: { shopDomain: "locked-shop.myshopify.com", webhookToken: "t-locked" } });
    await holder.query("BEGIN");
    await holder.query(`SELECT id FROM "Shop" WHERE id = $1 FOR UPDATE`, [shop.id]);

    const started = Date.now();
    await expect(db.shop.update({ where: { id: shop.id }, data: { webhookToken: "t-changed" } })).rejects.toThrow(/statement timeout/i);
    // Cancelled by the server, not left to the test's own timeout.
    expect(Date.now() - started).toBeLessThan(10_000);
    // The one connection is back in the pool and answers.
    expect(await db.shop.count()).toBe(1);
    expect(await sql.query<{ one: number }>(Prisma.sql`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
  } finally {
    await holder.query("ROLLBACK").catch(() => undefined);
    await holder.end();
    await db.$disconnect();
  }
}, 30_000);

it("the configured database takes its statement timeout from DATABASE_STATEMENT_TIMEOUT_MS, 15 s by default", async () => {
  expect(parseEnv({ DATABASE_URL: database.url }).DATABASE_STATEMENT_TIMEOUT_MS).toBe(15_000);
  const settings = parseEnv({ DATABASE_URL: database.url, DATABASE_STATEMENT_TIMEOUT_MS: "2500" });
  const { db } = openConfiguredDatabase(settings);
  try {
    const [row] = await db.$queryRawUnsafe<{ statement_timeout: string }[]>("SHOW statement_timeout");
    expect(row!.statement_timeout).toBe("2500ms");
  } finally {
    await db.$disconnect();
  }
});
