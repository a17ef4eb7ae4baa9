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

/**
 * The time zone the real service writes its datetimes in. Django with USE_TZ renders them in
 * its TIME_ZONE, and every recorded order carries Madrid's offset for its date
 * ("2022-10-06T15:00:59.821392+02:00"), never "Z" or "+00:00".
 */
export const GATEWAY_TIME_ZONE = "Europe/Madrid";

const gatewayOffsetFormat = new Intl.DateTimeFormat("en-US", { timeZone: GATEWAY_TIME_ZONE, timeZoneName: "longOffset" });

/** Minutes east of UTC in the gateway's time zone at that instant (+60 in winter, +120 in summer). */
export function gatewayOffsetMinutes(d: Date): number {
  const name = gatewayOffsetFormat.formatToParts(d).find((p) => p.type === "timeZoneName")?.value ?? "GMT";
  const m = /^GMT([+-])(\d{2}):(\d{2})$/.exec(name);
  if (!m) return 0;
  const minutes = Number(m[2]) * 60 + Number(m[3]);
  return m[1] === "-" ? -minutes : minutes;
}

/**
 * A datetime of the gateway's API and webhooks: the wall-clock time in Madrid with that
 * instant's offset, microseconds only when non-zero, as DRF writes a Django datetime.
 * The instant is the same as in UTC; only the way it is written differs.
 */
export function gatewayDateTime(d: Date): string {
  const offset = gatewayOffsetMinutes(d);
  const local = new Date(d.getTime() + offset * 60_000);
  const base = local.toISOString().slice(0, 19);
  const ms = local.getUTCMilliseconds();
  const abs = Math.abs(offset);
  const sign = offset < 0 ? "-" : "+";
  const zone = `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
  return ms === 0 ? `${base}${zone}` : `${base}.${String(ms).padStart(3, "0")}000${zone}`;
}
