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

  async function counts(tx: Pick<Database, "gatewayCall">, keyHash: string, now: Date) {
    const since = (ms: number) => new Date(now.getTime() - ms);
    const [gMin, gDay, cMin, cDay] = await Promise.all([
      tx.gatewayCall.findMany({ where: { deviceHash: keyHash, at: { gt: since(MINUTE_MS) } }, select: { at: true }, orderBy: { at: "asc" } }),
      tx.gatewayCall.findMany({ where: { deviceHash: keyHash, at: { gt: since(DAY_MS) } }, select: { at: true }, orderBy: { at: "asc" } }),
      tx.gatewayCall.findMany({ where: { deviceHash: keyHash, class: "critical", at: { gt: since(MINUTE_MS) } }, select: { at: true }, orderBy: { at: "asc" } }),
      tx.gatewayCall.findMany({ where: { deviceHash: keyHash, class: "critical", at: { gt: since(DAY_MS) } }, select: { at: true }, orderBy: { at: "asc" } }),
    ]);
    return { gMin, gDay, cMin, cDay };
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
        const checks: [QuotaWindow, { at: Date }[], number, number][] = [
          ["general_day", c.gDay, effective.generalPerDay, DAY_MS],
          ["general_minute", c.gMin, effective.generalPerMinute, MINUTE_MS],
        ];
        if (cls === "critical") {
          checks.unshift(["critical_day", c.cDay, effective.criticalPerDay, DAY_MS]);
          checks.push(["critical_minute", c.cMin, effective.criticalPerMinute, MINUTE_MS]);
        }
        for (const [window, used, limit, duration] of checks) {
          if (used.length >= limit) {
            const oldest = used[used.length - limit]!.at.getTime();
            return { ok: false as const, window, retryAt: new Date(oldest + duration) };
          }
        }
        await tx.gatewayCall.create({ data: { deviceHash: keyHash, class: cls, at: now } });
        return { ok: true as const };
      });
    },
    async remaining(keyHash: string, now: Date): Promise<QuotaRemaining> {
      const c = await counts(db, keyHash, now);
      const general = { minute: Math.max(0, effective.generalPerMinute - c.gMin.length), day: Math.max(0, effective.generalPerDay - c.gDay.length) };
      return {
        general,
        critical: {
          minute: Math.min(general.minute, Math.max(0, effective.criticalPerMinute - c.cMin.length)),
          day: Math.min(general.day, Math.max(0, effective.criticalPerDay - c.cDay.length)),
        },
      };
    },
  };
}
