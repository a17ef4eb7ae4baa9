// The sandbox's notion of "now": an injectable base clock plus an offset that
// POST /sandbox/clock advances (persisted, so simulated time survives restarts).
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export class OffsetClock implements Clock {
  private offsetMs: number;
  constructor(
    private readonly base: Clock,
    offsetMs = 0,
  ) {
    this.offsetMs = offsetMs;
  }
  now(): Date {
    return new Date(this.base.now().getTime() + this.offsetMs);
  }
  get offset(): number {
    return this.offsetMs;
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

/** ISO 8601 with a UTC offset, as Django writes datetimes (microseconds only when non-zero). */
export function isoDateTime(d: Date): string {
  const base = d.toISOString().slice(0, 19);
  const ms = d.getUTCMilliseconds();
  return ms === 0 ? `${base}+00:00` : `${base}.${String(ms).padStart(3, "0")}000+00:00`;
}
