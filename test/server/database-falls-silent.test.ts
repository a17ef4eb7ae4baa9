// A PostgreSQL connection that falls silent in the middle of a query (the server's host froze,
// a network path started dropping packets): the server's statement timeout cannot end that
// query, as its answer never arrives. The query fails a few seconds after the statement
// timeout instead of waiting for ever, and its connection is dropped, so that the pool's next
// query opens a new one instead of queueing behind the answer that will never come: outside a
// transaction, and inside one (the Prisma client's and the plain SQL's), whose connection would
// otherwise stay checked out, its rollback queued behind that answer too.
import { expect, it } from "vitest";
import { openAppDatabase, QUERY_ANSWER_MARGIN_MS } from "../../app/db/database.server";
import { Prisma } from "../../generated/prisma/sqlite/client";
import { databaseBehindFreezableProxy } from "../support/freezable-proxy";

const behindProxy = databaseBehindFreezableProxy({ migrated: true });

it("a query whose connection falls silent fails soon after the statement timeout, and the pool's next query gets a new connection", async () => {
  const { proxy, proxiedUrl } = behindProxy();
  const statementTimeoutMs = 300;
  // One connection: the next query can only be answered if the silent one was dropped.
  const { db, sql } = openAppDatabase(proxiedUrl, { poolSize: 1, statementTimeoutMs });
  try {
    expect(await db.shop.count()).toBe(0);
    proxy.freeze();

    const started = Date.now();
    await expect(db.shop.count()).rejects.toThrow(/timeout/i);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(statementTimeoutMs + QUERY_ANSWER_MARGIN_MS - 50);
    expect(waited).toBeLessThan(statementTimeoutMs + QUERY_ANSWER_MARGIN_MS + 5_000);

    // Through a new connection, which passes: the client and the plain SQL beside it answer.
    expect(await db.shop.count()).toBe(0);
    expect(await sql.query<{ one: number }>(Prisma.sql`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
  } finally {
    await db.$disconnect().catch(() => undefined);
  }
}, 30_000);

it("a transaction whose connection falls silent fails, and its connection is not kept from the pool (the client's and the plain SQL's)", async () => {
  const { proxy, proxiedUrl } = behindProxy();
  const { db, sql } = openAppDatabase(proxiedUrl, { poolSize: 1, statementTimeoutMs: 300 });
  try {
    await expect(
      db.$transaction(async (tx) => {
        await tx.shop.count();
        proxy.freeze();
        return tx.shop.count();
      }),
    ).rejects.toThrow();
    expect(await db.shop.count()).toBe(0);

    await expect(
      sql.inTransaction(async (tx) => {
        await tx.query(Prisma.sql`SELECT 1 AS one`);
        proxy.freeze();
        return tx.query(Prisma.sql`SELECT 2 AS two`);
      }),
    ).rejects.toThrow();
    expect(await sql.query<{ one: number }>(Prisma.sql`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
    expect(await db.shop.count()).toBe(0);
  } finally {
    await db.$disconnect().catch(() => undefined);
  }
}, 40_000);
