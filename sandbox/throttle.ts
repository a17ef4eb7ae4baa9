// Request throttles per device key, as Django REST Framework's
// SimpleRateThrottle works: a sliding log of request times per scope, every
// applicable scope checked (cumulative), and Retry-After taken from the scope
// that frees up last.
import type { Clock } from "./clock.js";

export interface ThrottleLimits {
  perMinute: number;
  perDay: number;
  criticalPerMinute: number;
  criticalPerDay: number;
}

export const DEFAULT_LIMITS: ThrottleLimits = {
  perMinute: 60,
  perDay: 2000,
  criticalPerMinute: 15,
  criticalPerDay: 200,
};

interface Scope {
  name: string;
  limit: number;
  durationMs: number;
}

export type ThrottleDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class DeviceThrottle {
  private readonly history = new Map<string, number[]>();

  constructor(
    private readonly limits: ThrottleLimits,
    private readonly clock: Clock,
  ) {}

  private scopes(critical: boolean): Scope[] {
    const s: Scope[] = [
      { name: "anon", limit: this.limits.perDay, durationMs: 86_400_000 },
      { name: "anon_minute", limit: this.limits.perMinute, durationMs: 60_000 },
    ];
    if (critical) {
      s.push({ name: "anon_minute_strict", limit: this.limits.criticalPerMinute, durationMs: 60_000 });
      s.push({ name: "anon_day_strict", limit: this.limits.criticalPerDay, durationMs: 86_400_000 });
    }
    return s;
  }

  /** Checks and records one request of a device; critical = POST /orders/ and POST /device/. */
  check(deviceKey: string, critical: boolean): ThrottleDecision {
    const now = this.clock.now().getTime();
    const waits: number[] = [];
    for (const scope of this.scopes(critical)) {
      const key = `${scope.name}:${deviceKey}`;
      const log = (this.history.get(key) ?? []).filter((t) => t > now - scope.durationMs);
      if (log.length >= scope.limit) {
        const oldest = log[0] ?? now;
        waits.push(scope.durationMs - (now - oldest));
      } else {
        log.push(now);
      }
      this.history.set(key, log);
    }
    if (waits.length === 0) return { allowed: true };
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(Math.max(...waits) / 1000)) };
  }
}
