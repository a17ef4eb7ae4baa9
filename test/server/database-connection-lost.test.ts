// On PostgreSQL a connection can end under a statement: the server restarts or fails over, an
// administrator or a pooler ends the session, the idle-in-transaction timeout fires. The
// statement fails, the broken connection leaves the pool and the next query gets a new one,
// whichever way the statement was sent (the Prisma client, its transactions, the plain SQL and
// its transactions). The process goes on: a connection's error with nobody listening would
// otherwise end it.
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openAppDatabase } from "../../app/db/database.server";
import { Prisma } from "../../generated/prisma/sqlite/client";
import { createTestPostgresDatabase, type TestPostgresDatabase } from "../support/postgres";

let database: TestPostgresDatabase;
let admin: pg.Client;

beforeAll(async () => {
  database = await createTestPostgresDatabase();
  admin = await database.connect();
}, 60_000);

afterAll(() => database.drop());

/** Ends, from outside, the session running pg_sleep(`seconds`) once it is seen; resolves when it was. */
async function endSessionSleeping(seconds: number): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    const found = await admin.query<{ ended: boolean }>(
      `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE $1`,
      [`%pg_sleep(${seconds})%`],
    );
    if (found.rows.some((row) => row.ended)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no session ran pg_sleep(${seconds})`);
}

const ways = {
  "a plain statement": (sql: ReturnType<typeof openAppDatabase>["sql"], seconds: number) => sql.query(Prisma.sql`SELECT pg_sleep(${Prisma.raw(String(seconds))})`),
  "a plain transaction": (sql: ReturnType<typeof openAppDatabase>["sql"], seconds: number) =>
    sql.inTransaction(async (tx) => {
      await tx.query(Prisma.sql`SELECT 1`);
      return tx.query(Prisma.sql`SELECT pg_sleep(${Prisma.raw(String(seconds))})`);
    }),
} as const;

it.each(Object.keys(ways) as (keyof typeof ways)[])("%s whose connection ends fails, and the pool serves the next query on a new connection", async (way) => {
  const { db, sql } = openAppDatabase(database.url, { poolSize: 1 });
  try {
    const seconds = way === "a plain statement" ? 7.1 : 7.2;
    // Expected at once: the statement may fail before the session's end is confirmed to the admin client.
    const failing = expect(ways[way](sql, seconds)).rejects.toThrow(/terminat/i);
    await endSessionSleeping(seconds);
    await failing;
    expect(await sql.query<{ one: number }>(Prisma.sql`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
    expect(await db.$queryRaw<{ one: number }[]>`SELECT 1 AS one`).toEqual([{ one: 1 }]);
  } finally {
    await db.$disconnect();
  }
}, 30_000);

it("a Prisma transaction whose connection ends fails, and the client serves the next query", async () => {
  const { db } = openAppDatabase(database.url, { poolSize: 1 });
  try {
    const failing = expect(db.$transaction(async (tx) => tx.$queryRaw`SELECT pg_sleep(7.3)`, { timeout: 20_000 })).rejects.toThrow();
    await endSessionSleeping(7.3);
    await failing;
    expect(await db.$queryRaw<{ one: number }[]>`SELECT 1 AS one`).toEqual([{ one: 1 }]);
  } finally {
    await db.$disconnect();
  }
}, 30_000);
