// The plain SQL of the hot paths: on PostgreSQL straight on the pool, on SQLite straight on the
// client's driver adapter. Either way a statement must read and write exactly what the Prisma
// client would, and never become part of a transaction the client has open.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient as createLibsqlClient } from "@libsql/client";
import { PrismaLibSQL } from "@prisma/adapter-libsql";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../generated/prisma/sqlite/client";
import { openAppDatabase, type Database } from "../../app/db/database.server";
import { applyMigrations } from "../../app/db/migrate.server";
import { NestedPlainSqlError, plainSqlOnAdapter, type PlainSql } from "../../app/db/plain-sql.server";
import { createTestPostgresDatabase } from "../support/postgres";

const databases: { name: string; open(): Promise<{ url: string; drop(): Promise<void> }> }[] = [
  { name: "SQLite", open: async () => ({ url: `file:${join(mkdtempSync(join(tmpdir(), "plain-sql-")), "app.db")}`, drop: async () => undefined }) },
  { name: "PostgreSQL", open: createTestPostgresDatabase },
];

const AT = new Date("2026-11-22T23:30:00.123Z");
const zoneAtStart = process.env.TZ;

describe.each(databases)("on $name", ({ name, open }) => {
  let url: string;
  let drop: () => Promise<void>;
  let db: Database;
  let sql: PlainSql;
  let serial = 0;
  const call = (at: Date) => Prisma.sql`INSERT INTO "GatewayCall" ("id", "deviceHash", "class", "at") VALUES (${`call-${++serial}`}, ${"device"}, ${"general"}, ${at})`;

  beforeAll(async () => {
    ({ url, drop } = await open());
    await applyMigrations(url);
    ({ db, sql } = openAppDatabase(url));
  });

  afterEach(() => {
    if (zoneAtStart === undefined) delete process.env.TZ;
    else process.env.TZ = zoneAtStart;
  });

  afterAll(async () => {
    await db?.$disconnect();
    await drop?.();
  });

  it("speaks the dialect of its database", () => {
    expect(sql.kind).toBe(name === "SQLite" ? "sqlite" : "postgresql");
  });

  it("returns the rows the client returns, value for value and type for type", async () => {
    await db.shop.create({ data: { shopDomain: "rows.myshopify.com", webhookToken: "plain-sql-token-0001", uninstalledAt: AT, testMode: true } });
    await sql.execute(call(AT));
    const read = Prisma.sql`
      SELECT s."shopDomain", s."testMode", s."uninstalledAt", s."sandboxFixedCurrency",
        (SELECT COUNT(*) FROM "GatewayCall" WHERE "deviceHash" = ${"device"}) AS "calls"
      FROM "Shop" AS s WHERE s."shopDomain" = ${"rows.myshopify.com"}`;
    const plain = await sql.query<Record<string, unknown>>(read);
    expect(plain).toEqual(await db.$queryRaw<Record<string, unknown>[]>(read));
    // COUNT is a bigint on PostgreSQL, an integer on SQLite, through either path.
    expect(plain).toEqual([{ shopDomain: "rows.myshopify.com", testMode: true, uninstalledAt: AT, sandboxFixedCurrency: null, calls: name === "SQLite" ? 1 : 1n }]);
  });

  it("writes and reads times as UTC whatever the process's time zone, as the client does", async () => {
    process.env.TZ = "Pacific/Auckland";
    expect(new Date(2026, 0, 1).getTimezoneOffset()).not.toBe(0);
    await sql.execute(call(AT));
    const id = `call-${serial}`;
    // Written by the plain statement, read by the model, and the other way round.
    expect((await db.gatewayCall.findUniqueOrThrow({ where: { id } })).at).toEqual(AT);
    const [row] = await sql.query<{ at: Date }>(Prisma.sql`SELECT "at" FROM "GatewayCall" WHERE "id" = ${id}`);
    expect(row?.at).toEqual(AT);
  });

  it.runIf(name === "PostgreSQL")("shares one pool of DATABASE_POOL_SIZE connections between the client and the plain statements", async () => {
    const opened = openAppDatabase(url, { poolSize: 2 });
    try {
      const who = Prisma.sql`SELECT pg_backend_pid() AS "pid", pg_sleep(0.05)::text AS "slept"`;
      const rows = await Promise.all([
        ...Array.from({ length: 3 }, () => opened.sql.query<{ pid: number }>(who)),
        ...Array.from({ length: 3 }, () => opened.db.$queryRaw<{ pid: number }[]>(who)),
      ]);
      expect(new Set(rows.flat().map((row) => row.pid)).size).toBe(2);
    } finally {
      await opened.db.$disconnect();
    }
  });

  it("commits the statements of a transaction all or none, and the next one runs as usual", async () => {
    const before = await db.gatewayCall.count();
    const first = call(AT);
    // The second statement repeats the first one's id: the primary key refuses it.
    await expect(sql.executeInTransaction([first, first])).rejects.toThrow();
    expect(await db.gatewayCall.count()).toBe(before);
    expect(await sql.executeInTransaction([call(AT), call(AT)])).toEqual([1, 1]);
    expect(await db.gatewayCall.count()).toBe(before + 2);
  });

  it("gives each of many statements issued at once its own outcome: one the database refuses fails alone, the others are stored", async () => {
    const before = await db.gatewayCall.count();
    const taken = call(AT);
    await sql.execute(taken);
    const burst = Array.from({ length: 40 }, (_, i) => (i === 17 ? taken : call(AT)));
    const outcomes = await Promise.allSettled(burst.map((statement) => sql.execute(statement)));
    expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value : "refused"))).toEqual(burst.map((_, i) => (i === 17 ? "refused" : 1)));
    expect(await db.gatewayCall.count()).toBe(before + 40);
  });

  it("keeps the transactions of many callers at once apart: one that throws after writing leaves nothing, the others are committed whole", async () => {
    const before = await db.gatewayCall.count();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        sql.inTransaction(async (tx) => {
          await tx.execute(call(AT));
          const second = call(AT);
          const id = `call-${serial}`;
          await tx.execute(second);
          if (i % 5 === 3) throw new Error(`transaction ${i} gave up`);
          // Its own write, seen inside it.
          return (await tx.query<{ id: string }>(Prisma.sql`SELECT "id" FROM "GatewayCall" WHERE "id" = ${id}`)).length;
        }),
      ),
    );
    expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value : (o.reason as Error).message))).toEqual(
      Array.from({ length: 12 }, (_, i) => (i % 5 === 3 ? `transaction ${i} gave up` : 1)),
    );
    expect(await db.gatewayCall.count()).toBe(before + 2 * 10);
  });

  it.runIf(name === "SQLite")("holds the write lock from a batch's start, so no other connection's commit comes between a write that only read and the writes after it", async () => {
    // Another process's write to the file (a maintenance script), on a connection of its own
    // that does not wait for the lock (closed after each write: libsql leaves a statement
    // refused with SQLITE_BUSY holding its lock until then).
    const insertFromOutside = async (id: string) => {
      const other = createLibsqlClient({ url, timeout: 1 });
      try {
        await other.execute(`INSERT INTO "GatewayCall" ("id", "deviceHash", "class", "at") VALUES ('${id}', 'x', 'general', '2026-01-01')`);
        return "committed";
      } catch {
        return "refused: the lock is held";
      } finally {
        other.close();
      }
    };
    const before = await db.gatewayCall.count();
    let othersWrite: string | null = null;
    const outcomes = await Promise.allSettled([
      sql.execute(call(AT)),
      sql.inTransaction(async (tx) => {
        const rows = await tx.query(Prisma.sql`SELECT "id" FROM "Payment" LIMIT 10`);
        othersWrite = await insertFromOutside("outside-1");
        return rows.length;
      }),
      sql.execute(call(AT)),
      sql.execute(call(AT)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "fulfilled"]);
    expect(othersWrite).toBe("refused: the lock is held");
    expect(await insertFromOutside("outside-2")).toBe("committed");
    expect(await sql.execute(call(AT))).toBe(1);
    expect(await db.gatewayCall.count()).toBe(before + 5);
  });

  it.runIf(name === "SQLite")("fails only the transaction whose statement ends the shared transaction (INSERT OR ROLLBACK): the others of its batch are committed", async () => {
    const before = await db.gatewayCall.count();
    const takenId = `call-${++serial}`;
    await sql.execute(Prisma.sql`INSERT INTO "GatewayCall" ("id", "deviceHash", "class", "at") VALUES (${takenId}, ${"device"}, ${"general"}, ${AT})`);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        sql.inTransaction(async (tx) => {
          await tx.execute(call(AT));
          // A conflict that rolls back the whole transaction, not only this statement.
          if (i === 5) await tx.execute(Prisma.sql`INSERT OR ROLLBACK INTO "GatewayCall" ("id", "deviceHash", "class", "at") VALUES (${takenId}, ${"device"}, ${"general"}, ${AT})`);
          return i;
        }),
      ),
    );
    expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value : "failed"))).toEqual([0, 1, 2, 3, 4, "failed", 6, 7]);
    expect(await db.gatewayCall.count()).toBe(before + 1 + 7);
  });

  it.runIf(name === "SQLite")("writes the statements issued while one is being written in one transaction (one commit for many)", async () => {
    const factory = new PrismaLibSQL({ url });
    const adapter = await factory.connect();
    let transactions = 0;
    const counting = new Proxy(adapter, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (property === "startTransaction") transactions++;
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    try {
      const plain = plainSqlOnAdapter(async () => counting, "sqlite");
      const before = await db.gatewayCall.count();
      expect(await Promise.all(Array.from({ length: 20 }, () => plain.execute(call(AT))))).toEqual(Array.from({ length: 20 }, () => 1));
      expect(await db.gatewayCall.count()).toBe(before + 20);
      // The first alone, the nineteen that came while it was written in one transaction.
      expect(transactions).toBe(1);
    } finally {
      await adapter.dispose();
    }
  });

  it("refuses at once a statement or transaction started outside an open plain transaction from inside it, and rolls that transaction back", async () => {
    const before = await db.gatewayCall.count();
    let later: Promise<number> | null = null;
    for (const nested of [() => sql.execute(call(AT)), () => sql.query(Prisma.sql`SELECT 1 AS "one"`), () => sql.inTransaction((tx) => tx.execute(call(AT)))]) {
      await expect(
        sql.inTransaction(async (tx) => {
          await tx.execute(call(AT));
          // Work the transaction starts that runs once it has closed is not held to it.
          later ??= new Promise<number>((resolve, reject) => setTimeout(() => sql.execute(call(AT)).then(resolve, reject), 100));
          await nested();
        }),
      ).rejects.toThrow(NestedPlainSqlError);
    }
    expect(await db.gatewayCall.count()).toBe(before);
    expect(await later).toBe(1);
    expect(await db.gatewayCall.count()).toBe(before + 1);
  });

  it("waits for the client's open transaction instead of joining it: a rollback there leaves the plain statement's row", async () => {
    const inside = `call-${++serial}`;
    let plain: Promise<number> | null = null;
    await expect(
      db.$transaction(async (tx) => {
        await tx.gatewayCall.create({ data: { id: inside, deviceHash: "device", class: "general", at: AT } });
        plain = sql.execute(call(AT));
        // Turns of the event loop for the plain statement to run, if it could.
        await new Promise((resolve) => setTimeout(resolve, 50));
        throw new Error("rolled back on purpose");
      }),
    ).rejects.toThrow("rolled back on purpose");
    expect(await plain).toBe(1);
    expect(await db.gatewayCall.findUnique({ where: { id: inside } })).toBeNull();
    expect(await db.gatewayCall.findUnique({ where: { id: `call-${serial}` } })).not.toBeNull();
  });

  it("reads the Prisma client's types for every kind of column (numbers, text, times, flags, nulls)", async () => {
    await db.shop.create({ data: { shopDomain: "types.myshopify.com", webhookToken: "plain-sql-token-0002", testMode: false, readOrderOnWebhook: true } });
    const read = Prisma.sql`
      SELECT s."id", s."testMode", s."readOrderOnWebhook", s."createdAt", s."updatedAt", s."uninstalledAt", s."liveOfferedCurrencies",
        1.5 AS "half", ${"text"} AS "word", ${true} AS "flag", ${AT} AS "time", NULL AS "nothing"
      FROM "Shop" AS s WHERE s."shopDomain" = ${"types.myshopify.com"}`;
    expect(await sql.query(read)).toEqual(await db.$queryRaw(read));
  });
});
