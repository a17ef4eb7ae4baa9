// The simulated trading day: when each order arrives (busier in the evening), at which
// shop, in which coin, and what its shopper does — pays, underpays, or walks away and
// lets the order expire. Deterministic for a given seed.

export type Fate = "paid" | "underpaid" | "abandoned";

export interface PlannedOrder {
  index: number;
  shop: number;
  amount: string;
  currency: string;
  fate: Fate;
  createAt: number;
  chooseAt: number;
  payAt: number | null;
  confirmAt: number | null;
}

export type DayEvent = { at: number; order: number; kind: "create" | "choose" | "pay" | "confirm" };

/** Coins whose expiry window (20-60 min in the sandbox) outlasts the slowest shopper below. */
const COINS = ["BTC", "ETH", "LTC", "BCH", "DOGE"] as const;
const FATES: [Fate, number][] = [
  ["paid", 0.72],
  ["underpaid", 0.05],
  ["abandoned", 0.23],
];
const MINUTE = 60_000;

export function planDay(options: { orders: number; shops: number; startMs: number; durationMs: number; random: () => number }): PlannedOrder[] {
  const { random } = options;
  const between = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo));
  // Arrival times: a daily curve, quietest at 06:00 and busiest at 18:00 (relative to the start).
  const arrivals: number[] = [];
  while (arrivals.length < options.orders) {
    const offset = random() * options.durationMs;
    const hour = (offset / 3_600_000) % 24;
    const weight = 0.3 + Math.sin((Math.PI * (hour - 6)) / 24) ** 2;
    if (random() * 1.3 < weight) arrivals.push(options.startMs + Math.floor(offset));
  }
  arrivals.sort((a, b) => a - b);
  return arrivals.map((createAt, index) => {
    const roll = random();
    let acc = 0;
    const fate = FATES.find(([, share]) => (acc += share) > roll)?.[0] ?? "abandoned";
    const chooseAt = createAt + between(20_000, 3 * MINUTE);
    const payAt = fate === "abandoned" ? null : chooseAt + between(MINUTE, 8 * MINUTE);
    const confirmAt = payAt === null ? null : payAt + between(MINUTE, 6 * MINUTE);
    return {
      index,
      shop: index % options.shops,
      amount: `${between(10, 250)}.${String(between(0, 100)).padStart(2, "0")}`,
      currency: COINS[between(0, COINS.length)]!,
      fate,
      createAt,
      chooseAt,
      payAt,
      confirmAt,
    };
  });
}

export function dayEvents(plan: readonly PlannedOrder[]): DayEvent[] {
  const events: DayEvent[] = [];
  for (const o of plan) {
    events.push({ at: o.createAt, order: o.index, kind: "create" }, { at: o.chooseAt, order: o.index, kind: "choose" });
    if (o.payAt !== null) events.push({ at: o.payAt, order: o.index, kind: "pay" });
    if (o.confirmAt !== null) events.push({ at: o.confirmAt, order: o.index, kind: "confirm" });
  }
  return events.sort((a, b) => a.at - b.at || a.order - b.order);
}

/** The most calls any device made within any 60 s window. */
export function peakPerMinute(callsByDevice: Map<string, number[]>): { peak: number; device: string | null } {
  let best = { peak: 0, device: null as string | null };
  for (const [device, times] of callsByDevice) {
    const sorted = [...times].sort((a, b) => a - b);
    let lo = 0;
    for (let hi = 0; hi < sorted.length; hi++) {
      while (sorted[hi]! - sorted[lo]! >= MINUTE) lo++;
      if (hi - lo + 1 > best.peak) best = { peak: hi - lo + 1, device };
    }
  }
  return best;
}
