// The gateway quota kept in the app's database, so every instance of the app shares one
// budget per device (the gateway throttles per device key). Same windows as the
// in-memory store of the gateway client: sliding minute and day windows; a critical call
// counts in the general windows too.
import { DEFAULT_QUOTA_LIMITS, type QuotaClass, type QuotaLimits, type QuotaRemaining, type QuotaStore, type QuotaTakeResult, type QuotaWindow } from "~/gateway/quota";
import { databaseKind, type Database } from "./database.server";

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

export function createPrismaQuotaStore(db: Database, databaseUrl: string, limits: Partial<QuotaLimits> = {}): QuotaStore {
  const effective = { ...DEFAULT_QUOTA_LIMITS, ...limits };
  const postgres = databaseKind(databaseUrl) === "postgresql";
  let lastPrune = 0;

  type Tx = Pick<Database, "gatewayCall">;
  const since = (now: Date, ms: number) => new Date(now.getTime() - ms);

  // Counted on the (deviceHash, at) index; rows are only read to find when a full window frees up.
  async function counts(tx: Tx, keyHash: string, now: Date) {
    const [gMin, gDay, cMin, cDay] = await Promise.all([
      tx.gatewayCall.count({ where: { deviceHash: keyHash, at: { gt: since(now, MINUTE_MS) } } }),
      tx.gatewayCall.count({ where: { deviceHash: keyHash, at: { gt: since(now, DAY_MS) } } }),
      tx.gatewayCall.count({ where: { deviceHash: keyHash, class: "critical", at: { gt: since(now, MINUTE_MS) } } }),
      tx.gatewayCall.count({ where: { deviceHash: keyHash, class: "critical", at: { gt: since(now, DAY_MS) } } }),
    ]);
    return { gMin, gDay, cMin, cDay };
  }

  /** When the window has room again: the moment the call that filled it ages out. */
  async function freesAt(tx: Tx, keyHash: string, now: Date, critical: boolean, used: number, limit: number, duration: number): Promise<Date> {
    const blocking = await tx.gatewayCall.findFirst({
      where: { deviceHash: keyHash, ...(critical ? { class: "critical" } : {}), at: { gt: since(now, duration) } },
      orderBy: { at: "asc" },
      skip: used - limit,
      select: { at: true },
    });
    return new Date((blocking?.at ?? now).getTime() + duration);
  }

  return {
    async take(keyHash: string, cls: QuotaClass, now: Date): Promise<QuotaTakeResult> {
      if (now.getTime() - lastPrune > 10 * MINUTE_MS) {
        lastPrune = now.getTime();
        await db.gatewayCall.deleteMany({ where: { at: { lt: new Date(now.getTime() - DAY_MS - MINUTE_MS) } } });
      }
      return db.$transaction(async (tx) => {
        // One taker per device at a time across instances (PostgreSQL); SQLite serialises writers itself.
        if (postgres) await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(hashtext($1))`, keyHash);
        const c = await counts(tx, keyHash, now);
        const checks: [QuotaWindow, number, number, number, boolean][] = [
          ["general_day", c.gDay, effective.generalPerDay, DAY_MS, false],
          ["general_minute", c.gMin, effective.generalPerMinute, MINUTE_MS, false],
        ];
        if (cls === "critical") {
          checks.unshift(["critical_day", c.cDay, effective.criticalPerDay, DAY_MS, true]);
          checks.push(["critical_minute", c.cMin, effective.criticalPerMinute, MINUTE_MS, true]);
        }
        for (const [window, used, limit, duration, critical] of checks) {
          if (used >= limit) return { ok: false as const, window, retryAt: await freesAt(tx, keyHash, now, critical, used, limit, duration) };
        }
        await tx.gatewayCall.create({ data: { deviceHash: keyHash, class: cls, at: now } });
        return { ok: true as const };
      });
    },
    async remaining(keyHash: string, now: Date): Promise<QuotaRemaining> {
      const c = await counts(db, keyHash, now);
      const general = { minute: Math.max(0, effective.generalPerMinute - c.gMin), day: Math.max(0, effective.generalPerDay - c.gDay) };
      return {
        general,
        critical: {
          minute: Math.min(general.minute, Math.max(0, effective.criticalPerMinute - c.cMin)),
          day: Math.min(general.day, Math.max(0, effective.criticalPerDay - c.cDay)),
        },
      };
    },
  };
}
