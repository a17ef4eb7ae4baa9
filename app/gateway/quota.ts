// Owns the client-side request budget per device key, mirroring the service's
// throttles so a busy shop slows itself down instead of getting 429s (and, at
// the daily limits, a day without payments). Every call counts against the
// general windows; POST /orders/ and POST /device/ also count against the
// critical ones. Windows slide like the service's throttles: a call frees its
// slot exactly one minute (or one day) after it was made.

import { createHash } from "node:crypto";

export type QuotaClass = "general" | "critical";

/** A window of the budget, or the gateway's own throttle on the device as a 429 last announced it. */
export type QuotaWindow = "general_minute" | "general_day" | "critical_minute" | "critical_day" | "gateway_throttle";

export interface QuotaLimits {
  generalPerMinute: number;
  generalPerDay: number;
  criticalPerMinute: number;
  criticalPerDay: number;
}

export const DEFAULT_QUOTA_LIMITS: Readonly<QuotaLimits> = {
  generalPerMinute: 60,
  generalPerDay: 2000,
  criticalPerMinute: 15,
  criticalPerDay: 200,
};

/**
 * General calls a minute and a day kept free for new orders (POST /orders/ shares the general
 * budget, and a new order is read soon after): reads that can wait (reconciliation, a page
 * refresh) are made only while this much is left. The general limits must be above it.
 */
export const QUOTA_RESERVE = { minute: 20, day: 600 } as const;

export type QuotaTakeResult = { ok: true } | { ok: false; retryAt: Date; window: QuotaWindow };

/** Calls that can still be made now; critical counts are also bounded by the general budget. */
export interface QuotaRemaining {
  general: { minute: number; day: number };
  critical: { minute: number; day: number };
}

/**
 * Keyed by `keyHash` (see hashDeviceKey), never by the device key itself, so a
 * store (in memory, in a database) never holds a secret.
 */
export interface QuotaStore {
  /** Records one call if every window it counts against has room; records nothing otherwise. */
  take(keyHash: string, cls: QuotaClass, now: Date): Promise<QuotaTakeResult>;
  /**
   * The calls each window has room for now; none in the minute while the gateway's 429 holds
   * the class (holdUntil), so that work which asks first (a reconciliation pass, a page's read)
   * waits for the hold instead of taking a call that would only wait for it.
   */
  remaining(keyHash: string, now: Date): Promise<QuotaRemaining>;
  /**
   * The gateway answered 429 saying when it takes the device's calls again: until then no call
   * of this process is let through (take refuses with "gateway_throttle"), so that the other
   * calls on the device (another pass, a webhook's read, a shopper's return) do not each run
   * into the throttle, and keep it full, before its end. `cls` is the class of the call that met
   * the 429: a general call's 429 holds every call (each counts in the general throttles); a
   * critical call's holds only critical calls, as the strict throttles (15/min, 200/day) it may
   * have met count only those, and the gateway still answers the device's reads (a read that
   * meets the general throttle gets its own 429, which then holds every call).
   */
  holdUntil(keyHash: string, until: Date, cls?: QuotaClass): void;
  /**
   * Gives back one call of `cls` taken at `at` (by take, with that time), for a call that was
   * taken but is surely never made: a prepared order whose payment session was a repeat. A
   * store without it keeps the call counted, which errs on the side of the gateway's throttle.
   */
  giveBack?(keyHash: string, cls: QuotaClass, at: Date): Promise<void>;
}

/**
 * The holds of holdUntil, in the process's memory (each instance learns of the throttle from its
 * own 429s: at most one call each per announced wait).
 */
export function createThrottleHolds(): Pick<QuotaStore, "holdUntil"> & {
  held(keyHash: string, cls: QuotaClass, now: Date): QuotaTakeResult | null;
  /** `remaining` with no room in the minute of a class the gateway holds. */
  heldBack(keyHash: string, now: Date, remaining: QuotaRemaining): QuotaRemaining;
} {
  const until: Record<QuotaClass, Map<string, number>> = { general: new Map(), critical: new Map() };
  const heldIn = (holds: Map<string, number>, keyHash: string, nowMs: number): number | null => {
    const end = holds.get(keyHash);
    if (end === undefined) return null;
    if (end <= nowMs) {
      holds.delete(keyHash);
      return null;
    }
    return end;
  };
  const held = (keyHash: string, cls: QuotaClass, now: Date): QuotaTakeResult | null => {
    // A general hold stops every call; a critical one only the critical calls.
    const ends = [heldIn(until.general, keyHash, now.getTime()), cls === "critical" ? heldIn(until.critical, keyHash, now.getTime()) : null];
    const end = Math.max(...ends.map((e) => e ?? 0));
    return end > 0 ? { ok: false, retryAt: new Date(end), window: "gateway_throttle" } : null;
  };
  return {
    holdUntil(keyHash, at, cls = "general") {
      const holds = until[cls];
      if (at.getTime() > (holds.get(keyHash) ?? 0)) holds.set(keyHash, at.getTime());
    },
    held,
    heldBack(keyHash, now, remaining) {
      // A critical call is held by either hold (held), so its answer covers the general one's too.
      const general = held(keyHash, "general", now) !== null;
      const critical = held(keyHash, "critical", now) !== null;
      return {
        general: general ? { ...remaining.general, minute: 0 } : remaining.general,
        critical: critical ? { ...remaining.critical, minute: 0 } : remaining.critical,
      };
    },
  };
}

export function hashDeviceKey(deviceKey: string): string {
  return createHash("sha256").update("gateway-quota\0").update(deviceKey).digest("hex");
}

export function isDayWindow(window: QuotaWindow): boolean {
  return window === "general_day" || window === "critical_day";
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

interface WindowSpec {
  window: QuotaWindow;
  log: "general" | "critical";
  durationMs: number;
  limit: number;
}

function windowsFor(cls: QuotaClass, limits: QuotaLimits): WindowSpec[] {
  const general: WindowSpec[] = [
    { window: "general_minute", log: "general", durationMs: MINUTE_MS, limit: limits.generalPerMinute },
    { window: "general_day", log: "general", durationMs: DAY_MS, limit: limits.generalPerDay },
  ];
  if (cls === "general") return general;
  return [
    ...general,
    { window: "critical_minute", log: "critical", durationMs: MINUTE_MS, limit: limits.criticalPerMinute },
    { window: "critical_day", log: "critical", durationMs: DAY_MS, limit: limits.criticalPerDay },
  ];
}

interface KeyLogs {
  // Call times in ms, ascending, no older than a day.
  general: number[];
  critical: number[];
}

/** Index of the first entry newer than `since` in an ascending array. */
function firstAfter(times: readonly number[], since: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((times[mid] as number) > since) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// Keeps the log ascending even if the injected clock steps back.
function insertSorted(times: number[], t: number): void {
  const last = times[times.length - 1];
  if (last === undefined || last <= t) times.push(t);
  else times.splice(firstAfter(times, t), 0, t);
}

function usage(times: readonly number[], spec: WindowSpec, nowMs: number): { used: number; start: number } {
  const start = firstAfter(times, nowMs - spec.durationMs);
  return { used: times.length - start, start };
}

export function createMemoryQuotaStore(limits: Partial<QuotaLimits> = {}): QuotaStore {
  const effective: QuotaLimits = { ...DEFAULT_QUOTA_LIMITS, ...limits };
  const byKey = new Map<string, KeyLogs>();
  const holds = createThrottleHolds();

  function logsFor(keyHash: string, nowMs: number): KeyLogs {
    let logs = byKey.get(keyHash);
    if (logs === undefined) {
      logs = { general: [], critical: [] };
      byKey.set(keyHash, logs);
    }
    for (const name of ["general", "critical"] as const) {
      const log = logs[name];
      const keepFrom = firstAfter(log, nowMs - DAY_MS);
      if (keepFrom > 0) log.splice(0, keepFrom);
    }
    return logs;
  }

  return {
    async take(keyHash, cls, now) {
      const held = holds.held(keyHash, cls, now);
      if (held) return held;
      const nowMs = now.getTime();
      const logs = logsFor(keyHash, nowMs);
      let blocked: { retryAt: number; window: QuotaWindow } | null = null;
      for (const spec of windowsFor(cls, effective)) {
        const times = logs[spec.log];
        const { used, start } = usage(times, spec, nowMs);
        if (used < spec.limit) continue;
        // The slot frees when enough of the oldest calls in the window age out.
        const freeing = times[start + used - spec.limit] ?? nowMs;
        const retryAt = freeing + spec.durationMs;
        // A day window outranks a minute window: waiting a minute would not help.
        const better =
          blocked === null ||
          (isDayWindow(spec.window) && !isDayWindow(blocked.window)) ||
          (isDayWindow(spec.window) === isDayWindow(blocked.window) && retryAt > blocked.retryAt);
        if (better) blocked = { retryAt, window: spec.window };
      }
      if (blocked !== null) {
        return { ok: false, retryAt: new Date(blocked.retryAt), window: blocked.window };
      }
      insertSorted(logs.general, nowMs);
      if (cls === "critical") insertSorted(logs.critical, nowMs);
      return { ok: true };
    },

    async remaining(keyHash, now) {
      const nowMs = now.getTime();
      const logs = logsFor(keyHash, nowMs);
      const left = (spec: WindowSpec) => Math.max(0, spec.limit - usage(logs[spec.log], spec, nowMs).used);
      const [gMinute, gDay, cMinute, cDay] = windowsFor("critical", effective).map(left) as [number, number, number, number];
      return holds.heldBack(keyHash, now, {
        general: { minute: gMinute, day: gDay },
        critical: { minute: Math.min(cMinute, gMinute), day: Math.min(cDay, gDay) },
      });
    },
    async giveBack(keyHash, cls, at) {
      const logs = byKey.get(keyHash);
      if (!logs) return;
      for (const name of cls === "critical" ? (["general", "critical"] as const) : (["general"] as const)) {
        const index = logs[name].indexOf(at.getTime());
        if (index >= 0) logs[name].splice(index, 1);
      }
    },
    holdUntil: holds.holdUntil,
  };
}
