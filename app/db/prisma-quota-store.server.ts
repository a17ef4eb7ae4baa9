// The gateway quota kept in the app's database, so every instance of the app shares one
// budget per device (the gateway throttles per device key). Same windows as the
// in-memory store of the gateway client: sliding minute and day windows; a critical call
// counts in the general windows too.
//
// A call is taken with one conditional INSERT that counts the windows and records the call
// only if every window has room: one statement on SQLite (a writing statement holds the
// write lock from its start, so no other writer comes in between); on PostgreSQL, whose
// statements each see the rows committed before they start, the same insert after a
// per-device advisory lock, both in one call of the "takeGatewayCall" function (its
// migration). Only a refused call reads more, to say which window is full.
import { randomUUID } from "node:crypto";
import { createThrottleHolds, DEFAULT_QUOTA_LIMITS, type QuotaClass, type QuotaLimits, type QuotaRemaining, type QuotaStore, type QuotaTakeResult, type QuotaWindow } from "~/gateway/quota";
import { Prisma } from "../../generated/prisma/sqlite/client";
import type { Database } from "./database.server";
import { timeValue, type PlainSql } from "./plain-sql.server";

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

interface WindowCounts {
  gMin: number;
  gDay: number;
  cMin: number;
  cDay: number;
}

/** `sql` runs the statements every call makes; `db` the rare reads of a refusal and the pruning. */
export function createPrismaQuotaStore(db: Database, sql: PlainSql, limits: Partial<QuotaLimits> = {}): QuotaStore {
  const effective = { ...DEFAULT_QUOTA_LIMITS, ...limits };
  const postgres = sql.kind === "postgresql";
  const holds = createThrottleHolds();
  let lastPrune = 0;

  const since = (now: Date, ms: number) => new Date(now.getTime() - ms);

  // The four windows in one pass over the device's last day, on the (deviceHash, at) index.
  const countsSql = (keyHash: string, now: Date) => Prisma.sql`
    SELECT
      COUNT(CASE WHEN "at" > ${since(now, MINUTE_MS)} THEN 1 END) AS "gMin",
      COUNT(*) AS "gDay",
      COUNT(CASE WHEN "class" = 'critical' AND "at" > ${since(now, MINUTE_MS)} THEN 1 END) AS "cMin",
      COUNT(CASE WHEN "class" = 'critical' THEN 1 END) AS "cDay"
    FROM "GatewayCall"
    WHERE "deviceHash" = ${keyHash} AND "at" > ${since(now, DAY_MS)}`;

  async function counts(keyHash: string, now: Date): Promise<WindowCounts> {
    const [row] = await sql.query<Record<keyof WindowCounts, number | bigint>>(countsSql(keyHash, now));
    // COUNT is a bigint on PostgreSQL; a day's calls fit a number.
    return { gMin: Number(row?.gMin ?? 0), gDay: Number(row?.gDay ?? 0), cMin: Number(row?.cMin ?? 0), cDay: Number(row?.cDay ?? 0) };
  }

  /** SQLite: records the call if every window it counts in has room; the number of rows inserted (0 or 1). */
  function insertIfRoom(keyHash: string, cls: QuotaClass, now: Date) {
    const critical = cls === "critical" ? Prisma.sql` AND "cDay" < ${effective.criticalPerDay} AND "cMin" < ${effective.criticalPerMinute}` : Prisma.empty;
    return sql.execute(Prisma.sql`
      INSERT INTO "GatewayCall" ("id", "deviceHash", "class", "at")
      SELECT ${randomUUID()}, ${keyHash}, ${cls}, ${now}
      FROM (${countsSql(keyHash, now)}) AS "used"
      WHERE "gDay" < ${effective.generalPerDay} AND "gMin" < ${effective.generalPerMinute}${critical}`,
      // A statement of its own, as above, never a part of a batch of writes: instances on other
      // connections to the file then never wait for a transaction that spans turns of this
      // one's event loop (a wait for SQLite's lock blocks the waiting thread).
      { alone: true },
    );
  }

  /**
   * The same in one round trip on PostgreSQL: the lock and the insert in the migration's
   * "takeGatewayCall". The call's record commits without waiting for the disk (its
   * transaction alone; every other write of the app waits): the server losing the last
   * fraction of a second of these records in a crash can only undercount a few calls, which
   * the gateway then refuses with a 429 that the client already handles. It saves a disk
   * flush on every gateway call.
   */
  async function takeOnPostgres(keyHash: string, cls: QuotaClass, now: Date): Promise<number> {
    const time = (at: Date) => timeValue(sql.kind, at);
    const count = (n: number) => Prisma.sql`CAST(${n} AS INTEGER)`;
    const [row] = await sql.query<{ recorded: number }>(Prisma.sql`
      SELECT "takeGatewayCall"(CAST(${randomUUID()} AS TEXT), CAST(${keyHash} AS TEXT), CAST(${cls} AS TEXT), ${time(now)},
        ${time(since(now, MINUTE_MS))}, ${time(since(now, DAY_MS))},
        ${count(effective.generalPerMinute)}, ${count(effective.generalPerDay)}, ${count(effective.criticalPerMinute)}, ${count(effective.criticalPerDay)}) AS "recorded",
        set_config('synchronous_commit', 'off', true) AS "commitWithoutFlush"`);
    return Number(row?.recorded ?? 0);
  }

  /** When the window has room again: the moment the call that filled it ages out. */
  async function freesAt(keyHash: string, now: Date, critical: boolean, used: number, limit: number, duration: number): Promise<Date> {
    const blocking = await db.gatewayCall.findFirst({
      where: { deviceHash: keyHash, ...(critical ? { class: "critical" } : {}), at: { gt: since(now, duration) } },
      orderBy: { at: "asc" },
      skip: used - limit,
      select: { at: true },
    });
    return new Date((blocking?.at ?? now).getTime() + duration);
  }

  /** The full window a refused call counts in, checked in this order; null if none is full (any more). */
  async function fullWindow(keyHash: string, cls: QuotaClass, now: Date): Promise<QuotaTakeResult | null> {
    const c = await counts(keyHash, now);
    const checks: [QuotaWindow, number, number, number, boolean][] = [
      ["general_day", c.gDay, effective.generalPerDay, DAY_MS, false],
      ["general_minute", c.gMin, effective.generalPerMinute, MINUTE_MS, false],
    ];
    if (cls === "critical") {
      checks.unshift(["critical_day", c.cDay, effective.criticalPerDay, DAY_MS, true]);
      checks.push(["critical_minute", c.cMin, effective.criticalPerMinute, MINUTE_MS, true]);
    }
    for (const [window, used, limit, duration, critical] of checks) {
      if (used >= limit) return { ok: false, window, retryAt: await freesAt(keyHash, now, critical, used, limit, duration) };
    }
    return null;
  }

  return {
    async take(keyHash: string, cls: QuotaClass, now: Date): Promise<QuotaTakeResult> {
      const held = holds.held(keyHash, cls, now);
      if (held) return held;
      if (now.getTime() - lastPrune > 10 * MINUTE_MS) {
        lastPrune = now.getTime();
        await db.gatewayCall.deleteMany({ where: { at: { lt: new Date(now.getTime() - DAY_MS - MINUTE_MS) } } });
      }
      // A refusal is explained by a later read; if a window emptied in between (rows pruned by
      // an instance whose clock runs ahead), the call is tried again.
      for (let attempt = 0; ; attempt += 1) {
        const inserted = postgres ? await takeOnPostgres(keyHash, cls, now) : await insertIfRoom(keyHash, cls, now);
        if (inserted === 1) return { ok: true };
        const full = await fullWindow(keyHash, cls, now);
        if (full) return full;
        if (attempt === 2) return { ok: false, window: cls === "critical" ? "critical_minute" : "general_minute", retryAt: new Date(now.getTime() + 1_000) };
      }
    },
    async remaining(keyHash: string, now: Date): Promise<QuotaRemaining> {
      const c = await counts(keyHash, now);
      const general = { minute: Math.max(0, effective.generalPerMinute - c.gMin), day: Math.max(0, effective.generalPerDay - c.gDay) };
      return holds.heldBack(keyHash, now, {
        general,
        critical: {
          minute: Math.min(general.minute, Math.max(0, effective.criticalPerMinute - c.cMin)),
          day: Math.min(general.day, Math.max(0, effective.criticalPerDay - c.cDay)),
        },
      });
    },
    async giveBack(keyHash: string, cls: QuotaClass, at: Date): Promise<void> {
      const taken = await db.gatewayCall.findFirst({ where: { deviceHash: keyHash, class: cls, at }, select: { id: true } });
      if (taken) await db.gatewayCall.deleteMany({ where: { id: taken.id } });
    },
    holdUntil: holds.holdUntil,
  };
}
