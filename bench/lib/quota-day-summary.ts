// Adds up the parts of the simulated day (each part: some of the shops, in its own process
// and database) into the day's figures, and computes the naive approach on the same
// timeline: a create per order, then one read per open order every minute until final.
import { peakPerMinute, type Fate } from "./day-schedule";
import { DROP_SHARE, TAB_KEPT_OPEN_SHARE, type QuotaDayPart, type ReturnRead } from "../quota-day";
import { round, summarize, type LatencySummary } from "./stats";
import type { DropProxyStats } from "./webhook-drop-proxy";

const MINUTE = 60_000;
const TARGET_CALLS_PER_ORDER = 1.2;
const GATEWAY_LIMIT_PER_MINUTE = 60;

export interface QuotaDaySummary {
  plan: { orders: number; shops: number; simulatedHours: number; dropShare: number; tabKeptOpenShare: Record<Fate, number>; fates: Record<Fate, number>; reconcileEverySimSeconds: number };
  parts: { database: string; shops: number[]; orders: number; calls: number; reconcilerPasses: { run: number; skippedWithNothingDue: number }; realSeconds: number; cpuSeconds: number; realSecondsBySpending: Record<string, number>; memoryCheckpointsMiB: Record<string, Record<string, number>>; appWarnings: Record<string, number>; problems: string[] }[];
  settled: { orders: number; settled: number; asExpected: number; unsettled: number; byWebhook: number; byReconciler: number; other: number };
  /** Simulated seconds from the gateway's final status to Shopify's resolve or reject. */
  gatewayFinalToShopifySimSeconds: LatencySummary;
  /** Shoppers' tabs on the gateway's page: sent back to the shop (reads counted under app.byCause.return), or closed. */
  shopperTabs: { returned: number; closed: number; returnReads: number };
  /**
   * Real milliseconds to a shopper's return answer, by the read it made: the ones that list the
   * shop's orders settle its other open payments before answering; those that read nothing are
   * the baseline of the same run.
   */
  returnAnswerMs: Record<ReturnRead, LatencySummary>;
  app: { calls: number; callsPerOrder: number; byEndpoint: Record<string, number>; byCause: Record<string, number>; peakPerDeviceMinute: number; status429: number; otherErrors: number; unanswered: number };
  naive: { calls: number; callsPerOrder: number; polls: number; peakPerDeviceMinute: number };
  webhooks: Omit<DropProxyStats, "inFlight">;
  targets: { callsPerOrder: number; callsPerOrderMet: boolean; everyOrderSettled: boolean; no429: boolean; peakWithinLimit: boolean };
}

const expectedOutcome: Record<Fate, string> = { paid: "RESOLVED", underpaid: "REJECTED", abandoned: "REJECTED" };

export function summarizeQuotaDay(parts: readonly QuotaDayPart[]): QuotaDaySummary {
  const orders = parts.flatMap((p) => p.orders);
  const calls = parts.flatMap((p) => p.calls);
  const answers = parts.flatMap((p) => p.returnAnswers);
  const shape = parts[0]!.shape;

  const fates: Record<Fate, number> = { paid: 0, underpaid: 0, abandoned: 0 };
  for (const o of orders) fates[o.fate]++;
  const settled = orders.filter((o) => o.shopify && (o.shopify.code === "RESOLVED" || o.shopify.code === "REJECTED"));
  const asExpected = settled.filter((o) => o.shopify!.code === expectedOutcome[o.fate]).length;
  const finalDelays = settled.filter((o) => o.gatewayFinalAt !== null).map((o) => (o.shopify!.at - o.gatewayFinalAt!) / 1000);

  const byEndpoint: Record<string, number> = {};
  const byCause: Record<string, number> = {};
  const appByDevice = new Map<string, number[]>();
  for (const c of calls) {
    byEndpoint[c.endpoint] = (byEndpoint[c.endpoint] ?? 0) + 1;
    byCause[c.phase] = (byCause[c.phase] ?? 0) + 1;
    appByDevice.set(c.device, [...(appByDevice.get(c.device) ?? []), c.at]);
  }
  const status429 = calls.filter((c) => c.status === 429).length;
  const otherErrors = calls.filter((c) => c.status !== 429 && c.status >= 400).length;
  const unanswered = calls.filter((c) => c.status === 0).length;

  const naiveByDevice = new Map<string, number[]>();
  let polls = 0;
  for (const o of orders) {
    if (!o.created) continue;
    const times = naiveByDevice.get(o.device) ?? naiveByDevice.set(o.device, []).get(o.device)!;
    times.push(o.createAt);
    const part = parts.find((p) => p.shops.includes(o.shop))!;
    const finalAt = o.gatewayFinalAt ?? part.simulatedEndMs;
    const n = Math.max(1, Math.ceil((finalAt - o.createAt) / MINUTE));
    for (let k = 1; k <= n; k++) times.push(o.createAt + k * MINUTE);
    polls += n;
  }
  const created = orders.filter((o) => o.created).length;
  const naiveCalls = created + polls;

  const webhooks = { arrived: 0, dropped: 0, forwarded: 0, accepted: 0, refused: 0, byStatus: {} as DropProxyStats["byStatus"] };
  for (const p of parts) {
    for (const key of ["arrived", "dropped", "forwarded", "accepted", "refused"] as const) webhooks[key] += p.webhooks[key];
    for (const [status, t] of Object.entries(p.webhooks.byStatus)) {
      const into = (webhooks.byStatus[status] ??= { arrived: 0, dropped: 0 });
      into.arrived += t.arrived;
      into.dropped += t.dropped;
    }
  }
  const bySource = { byWebhook: 0, byReconciler: 0, other: 0 };
  for (const p of parts) for (const key of ["byWebhook", "byReconciler", "other"] as const) bySource[key] += p.settledBySource[key];

  const appPeak = peakPerMinute(appByDevice).peak;
  const unsettled = orders.length - settled.length;
  return {
    plan: {
      orders: orders.length,
      shops: shape.shops,
      simulatedHours: round(Math.max(...parts.map((p) => (p.simulatedEndMs - p.startMs) / 3_600_000)), 2),
      dropShare: DROP_SHARE,
      tabKeptOpenShare: TAB_KEPT_OPEN_SHARE,
      fates,
      reconcileEverySimSeconds: 60,
    },
    parts: parts.map((p) => ({
      database: p.database,
      shops: p.shops.map((s) => s + 1),
      orders: p.orders.length,
      calls: p.calls.length,
      reconcilerPasses: p.reconcilerPasses,
      realSeconds: p.realSeconds,
      cpuSeconds: p.cpuSeconds,
      realSecondsBySpending: p.realSecondsBySpending,
      memoryCheckpointsMiB: p.memoryCheckpointsMiB,
      appWarnings: p.appLogs.messages,
      problems: p.problems,
    })),
    shopperTabs: {
      returned: parts.reduce((n, p) => n + p.shopperTabs.returned, 0),
      closed: parts.reduce((n, p) => n + p.shopperTabs.closed, 0),
      returnReads: parts.reduce((n, p) => n + p.shopperTabs.returnReads, 0),
    },
    returnAnswerMs: {
      listing: summarize(answers.filter((a) => a.read === "listing").map((a) => a.ms)),
      order: summarize(answers.filter((a) => a.read === "order").map((a) => a.ms)),
      none: summarize(answers.filter((a) => a.read === "none").map((a) => a.ms)),
    },
    settled: { orders: orders.length, settled: settled.length, asExpected, unsettled, ...bySource },
    gatewayFinalToShopifySimSeconds: summarize(finalDelays),
    app: { calls: calls.length, callsPerOrder: round(calls.length / orders.length), byEndpoint, byCause, peakPerDeviceMinute: appPeak, status429, otherErrors, unanswered },
    naive: { calls: naiveCalls, callsPerOrder: round(naiveCalls / orders.length), polls, peakPerDeviceMinute: peakPerMinute(naiveByDevice).peak },
    webhooks,
    targets: {
      callsPerOrder: TARGET_CALLS_PER_ORDER,
      callsPerOrderMet: calls.length / orders.length < TARGET_CALLS_PER_ORDER,
      everyOrderSettled: unsettled === 0 && asExpected === orders.length,
      no429: status429 === 0,
      peakWithinLimit: appPeak <= GATEWAY_LIMIT_PER_MINUTE,
    },
  };
}
