// The database-backed gateway quota that every instance of the app shares, on SQLite and PostgreSQL.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../generated/prisma/sqlite/client";
import { openAppDatabase, type AppDatabase } from "../../app/db/database.server";
import { applyMigrations } from "../../app/db/migrate.server";
import type { PlainSql } from "../../app/db/plain-sql.server";
import { createPrismaQuotaStore } from "../../app/db/prisma-quota-store.server";
import { createTestPostgresDatabase } from "../support/postgres";

const databases: { name: string; open(): Promise<{ url: string; drop(): Promise<void> }> }[] = [
  { name: "SQLite", open: async () => ({ url: `file:${join(mkdtempSync(join(tmpdir(), "quota-")), "app.db")}`, drop: async () => undefined }) },
  { name: "PostgreSQL", open: createTestPostgresDatabase },
];

describe.each(databases)("on $name", ({ name, open }) => {
  let url: string;
  let drop: () => Promise<void>;
  let db: AppDatabase;
  // Other app instances: their own clients (connections) to the same database.
  const instances: AppDatabase[] = [];

  beforeAll(async () => {
    ({ url, drop } = await open());
    await applyMigrations(url);
    db = openAppDatabase(url);
    for (let i = 0; i < 3; i++) instances.push(openAppDatabase(url));
  });

  afterAll(async () => {
    await Promise.all([db, ...instances].map((opened) => opened?.db.$disconnect()));
    await drop?.();
  });

  it("lets no call of the device through while the gateway's announced throttle lasts, records none, and other devices go on", async () => {
    const store = createPrismaQuotaStore(db.db, db.sql);
    const t0 = new Date("2026-11-22T11:00:00Z");
    const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
    store.holdUntil("throttled-device", at(120));
    expect(await store.take("throttled-device", "general", at(5))).toEqual({ ok: false, window: "gateway_throttle", retryAt: at(120) });
    expect(await store.take("throttled-device", "critical", at(119))).toEqual({ ok: false, window: "gateway_throttle", retryAt: at(120) });
    expect(await store.take("another-device", "general", at(5))).toEqual({ ok: true });
    // Nothing recorded, and no room said to be left in the minute while the hold lasts: work that
    // asks first (a reconciliation pass, a page's read) waits for it.
    expect(await store.remaining("throttled-device", at(119))).toEqual({ general: { minute: 0, day: 2000 }, critical: { minute: 0, day: 200 } });
    expect(await store.remaining("another-device", at(6))).toMatchObject({ general: { minute: 59 } });
    expect((await store.remaining("throttled-device", at(120))).general.minute).toBe(60);
    expect(await store.take("throttled-device", "general", at(120))).toEqual({ ok: true });
    // A creation's 429 holds the creations only.
    store.holdUntil("creations-held", at(180), "critical");
    expect(await store.remaining("creations-held", at(150))).toEqual({ general: { minute: 60, day: 2000 }, critical: { minute: 0, day: 200 } });
  });

  it("takes back a call given back (a prepared order never sent), in both windows of a critical call, and only one", async () => {
    const store = createPrismaQuotaStore(db.db, db.sql, { generalPerMinute: 5, generalPerDay: 50, criticalPerMinute: 2, criticalPerDay: 20 });
    const t0 = new Date("2026-11-22T12:00:00.123Z");
    const at = (ms: number) => new Date(t0.getTime() + ms);
    expect(await store.take("given-back", "critical", at(0))).toEqual({ ok: true });
    expect(await store.take("given-back", "critical", at(7))).toEqual({ ok: true });
    expect(await store.remaining("given-back", at(8))).toEqual({ general: { minute: 3, day: 48 }, critical: { minute: 0, day: 18 } });
    await store.giveBack!("given-back", "critical", at(7));
    expect(await store.remaining("given-back", at(8))).toEqual({ general: { minute: 4, day: 49 }, critical: { minute: 1, day: 19 } });
    // A time no call was taken at gives nothing back.
    await store.giveBack!("given-back", "critical", at(3));
    expect((await store.remaining("given-back", at(8))).critical.minute).toBe(1);
    expect(await store.take("given-back", "critical", at(9))).toEqual({ ok: true });
  });

  it("enforces the minute and day windows, critical calls counting in both, and says when room frees up", async () => {
    const store = createPrismaQuotaStore(db.db, db.sql, { generalPerMinute: 3, generalPerDay: 5, criticalPerMinute: 1, criticalPerDay: 2 });
    const t0 = new Date("2026-11-22T10:00:00Z");
    const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
    expect(await store.take("d", "critical", at(0))).toEqual({ ok: true });
    expect(await store.take("d", "critical", at(1))).toMatchObject({ ok: false, window: "critical_minute", retryAt: at(60) });
    expect(await store.take("d", "general", at(2))).toEqual({ ok: true });
    expect(await store.take("d", "general", at(3))).toEqual({ ok: true });
    expect(await store.take("d", "general", at(4))).toMatchObject({ ok: false, window: "general_minute", retryAt: at(60) });
    expect(await store.remaining("d", at(4))).toEqual({ general: { minute: 0, day: 2 }, critical: { minute: 0, day: 1 } });
    expect(await store.take("d", "general", at(61))).toEqual({ ok: true });
    expect(await store.take("d", "critical", at(62))).toEqual({ ok: true });
    // Five calls today: the day window is full until the first one is a day old.
    expect(await store.take("d", "general", at(130))).toMatchObject({ ok: false, window: "general_day", retryAt: at(86_400) });
    expect(await store.take("d", "critical", at(131))).toMatchObject({ ok: false, window: "critical_day", retryAt: at(86_400) });
    expect(await store.remaining("other", at(130))).toEqual({ general: { minute: 3, day: 5 }, critical: { minute: 1, day: 2 } });
    // A window slides: the first call is a day old at 86 400 s, so one call fits again just after.
    expect(await store.take("d", "general", at(86_400.001))).toEqual({ ok: true });
    expect(await store.remaining("d", at(86_400.001))).toEqual({ general: { minute: 2, day: 0 }, critical: { minute: 1, day: 0 } });
  });

  // SQLite has no such setting: every commit there waits for the disk.
  it.runIf(name === "PostgreSQL")("lets only a call's own record commit without waiting for the disk: the connection's next writes wait again", async () => {
    const store = createPrismaQuotaStore(db.db, db.sql, {});
    expect(await store.take("async", "general", new Date())).toEqual({ ok: true });
    // One statement at a time reuses the pool's most recent connection, the one the call used.
    for (let i = 0; i < 3; i++) {
      const rows = await db.sql.query<{ setting: string }>(Prisma.sql`SELECT current_setting('synchronous_commit') AS "setting"`);
      expect(rows).toEqual([{ setting: "on" }]);
    }
  });

  it("never lets instances taking at once exceed a window", async () => {
    const limits = { generalPerMinute: 7, generalPerDay: 100, criticalPerMinute: 4, criticalPerDay: 100 };
    const stores = instances.map((opened) => createPrismaQuotaStore(opened.db, opened.sql, limits));
    const now = new Date("2026-11-22T12:00:00Z");
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) => stores[i % stores.length]!.take("shared", i % 2 ? "critical" : "general", new Date(now.getTime() + i))),
    );
    const granted = results.filter((r) => r.ok).length;
    expect(granted).toBe(7);
    const criticalGranted = results.filter((r, i) => r.ok && i % 2 === 1).length;
    expect(criticalGranted).toBeLessThanOrEqual(4);
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && (r.window === "general_minute" || r.window === "critical_minute"))).toBe(true);
    expect(await stores[0]!.remaining("shared", new Date(now.getTime() + 100))).toMatchObject({ general: { minute: 0, day: 93 } });
  });
});

// Every gateway call counts its device's windows over the last day, up to the day's 2,000 general
// calls, on the app's thread on SQLite: the count reads the (deviceHash, at, class) index alone,
// never each of the day's rows.
describe("the count of a device's windows", () => {
  it("SQLite: reads a covering index: the statement a call sends searches no row of the table", async () => {
    const url = `file:${join(mkdtempSync(join(tmpdir(), "quota-plan-")), "app.db")}`;
    await applyMigrations(url);
    const opened = openAppDatabase(url);
    const sent: Prisma.Sql[] = [];
    const recording: PlainSql = {
      ...opened.sql,
      execute: (statement, options) => (sent.push(statement), opened.sql.execute(statement, options)),
      query: (statement) => (sent.push(statement), opened.sql.query(statement)),
    };
    try {
      const store = createPrismaQuotaStore(opened.db, recording, {});
      expect(await store.take("device", "critical", new Date("2026-11-22T12:00:00Z"))).toEqual({ ok: true });
      const take = sent.find((statement) => statement.sql.includes(`INSERT INTO "GatewayCall"`));
      const values = take!.values.map((value) => (value instanceof Date ? value.toISOString() : value));
      const plan = await opened.sql.query<{ detail: string }>(Prisma.raw(`EXPLAIN QUERY PLAN ${take!.sql}`.replace(/\?/g, () => sqlLiteral(values.shift()))));
      const steps = plan.map((row) => row.detail);
      expect(steps.filter((step) => /\bGatewayCall\b/.test(step))).toEqual([expect.stringMatching(/^SEARCH (main\.)?GatewayCall USING COVERING INDEX GatewayCall_deviceHash_at_class_idx \(deviceHash=\? AND at>\?\)$/)]);
    } finally {
      await opened.db.$disconnect();
    }
  });

  it("PostgreSQL: can be answered from the index alone (the count of the migration's takeGatewayCall)", async () => {
    const database = await createTestPostgresDatabase();
    const client = await database.connect();
    try {
      await applyMigrations(database.url);
      await client.query("BEGIN");
      // An empty table's plan is a scan whatever the indexes: only whether the index can answer it alone is asked.
      await client.query("SET LOCAL enable_seqscan = off");
      await client.query("SET LOCAL enable_bitmapscan = off");
      const { rows } = await client.query<{ "QUERY PLAN": string }>(
        `EXPLAIN SELECT COUNT(CASE WHEN c."at" > $2 THEN 1 END), COUNT(*), COUNT(CASE WHEN c."class" = 'critical' AND c."at" > $2 THEN 1 END), COUNT(CASE WHEN c."class" = 'critical' THEN 1 END)
         FROM "GatewayCall" AS c WHERE c."deviceHash" = $1 AND c."at" > $3`,
        ["device", "2026-11-22 11:59:00", "2026-11-21 12:00:00"],
      );
      expect(rows.map((row) => row["QUERY PLAN"]).join("\n")).toMatch(/Index Only Scan using "GatewayCall_deviceHash_at_class_idx"/);
      const indexes = await client.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE tablename = 'GatewayCall' ORDER BY indexname`);
      expect(indexes.rows.map((row) => row.indexname)).toEqual(["GatewayCall_deviceHash_at_class_idx", "GatewayCall_pkey"]);
    } finally {
      await client.query("ROLLBACK").catch(() => undefined);
      await client.end();
      await database.drop();
    }
  });
});

/** A value written into SQL text, for EXPLAIN (which takes no parameters through the plain SQL). */
function sqlLiteral(value: unknown): string {
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  return `'${String(value).replaceAll("'", "''")}'`;
}
