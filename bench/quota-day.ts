// Benchmark 3: the gateway request quota over a simulated day. Several shops (the gateway
// allows 200 new orders a day per device) take their orders through the real app; shoppers
// pay, underpay or walk away; 30% of the gateway's webhooks are lost on the way; the app's
// webhook processing and its reconciler (one pass per simulated minute, the app's default
// cadence) settle everything. Every gateway call is counted at a proxy in front of the
// sandbox and compared with polling each open order once a minute.
import { performance } from "node:perf_hooks";
import { startShopifyStandin, type ShopifyStandin } from "../dev/shopify-standin/server";
import { isDue, reconcileOnce } from "../app/payments/reconcile";
import { deliverDueMessages } from "../app/payments/outbox";
import { processWebhookInbox } from "../app/payments/process-webhooks";
import { OPEN_PAYMENT_STATES } from "../app/payments/payment-state";
import { startSandbox } from "../sandbox/server";
import { startBenchApp, type LogCounts } from "./lib/bench-app";
import { startCountingProxy, deviceTag, type GatewayCallRecord } from "./lib/counting-proxy";
import { dayEvents, peakPerMinute, planDay, type DayEvent, type Fate, type PlannedOrder } from "./lib/day-schedule";
import { freePort } from "./lib/free-port";
import { pollUntil } from "./lib/pool";
import { startShopRouter } from "./lib/shop-router";
import { SimClock } from "./lib/sim-clock";
import { round, seededRandom, summarize, type LatencySummary } from "./lib/stats";
import { startWebhookDropProxy, type DropProxyStats } from "./lib/webhook-drop-proxy";

const MINUTE = 60_000;
const DROP_SHARE = 0.3;
/** The app's default RECONCILE_INTERVAL_MS. */
const RECONCILE_EVERY_MS = 60_000;
const TARGET_CALLS_PER_ORDER = 1.2;
const GATEWAY_LIMIT_PER_MINUTE = 60;
const WORKER = "bench-day";

export interface QuotaDayResult {
  plan: { orders: number; shops: number; simulatedHours: number; dropShare: number; fates: Record<Fate, number>; reconcileEverySimSeconds: number };
  reconcilerPasses: { run: number; skippedWithNothingDue: number };
  settled: { orders: number; settled: number; asExpected: number; unsettled: number; byWebhook: number; byReconciler: number; other: number };
  /** Simulated seconds from the gateway's final status to the Shopify stand-in's resolve/reject. */
  gatewayFinalToShopifySimSeconds: LatencySummary;
  app: {
    calls: number;
    callsPerOrder: number;
    byEndpoint: Record<string, number>;
    byPhase: Record<string, number>;
    peakPerDeviceMinute: number;
    status429: number;
    otherErrors: number;
  };
  naive: { calls: number; callsPerOrder: number; polls: number; peakPerDeviceMinute: number };
  webhooks: DropProxyStats;
  targets: { callsPerOrder: number; callsPerOrderMet: boolean; everyOrderSettled: boolean; no429: boolean; peakWithinLimit: boolean };
  appLogs: LogCounts;
  realSeconds: number;
  /** Where the real time went (the simulated clock only moves between these). */
  realSecondsBySpending: Record<string, number>;
  /** rss of this process (sandbox, stand-ins, proxies and app together) after setup and after the day. */
  memoryCheckpointsMiB: Record<string, Record<string, number>>;
  problems: string[];
}

interface Tracked {
  plan: PlannedOrder;
  sessionId: string | null;
  gid: string | null;
  orderId: string | null;
  status: string;
  expiresAt: number | null;
  gatewayFinalAt: number | null;
}

export async function runQuotaDay(options: { databaseUrl: string; quick: boolean; log(line: string): void }): Promise<QuotaDayResult> {
  const realStart = performance.now();
  const shape = options.quick ? { orders: 200, shops: 2, hours: 6 } : { orders: 1000, shops: 6, hours: 24 };
  const problems: string[] = [];
  const memory: Record<string, Record<string, number>> = {};
  const mark = (name: string) => {
    // After a full collection (the process runs with --expose-gc): live objects only.
    (globalThis as { gc?: () => void }).gc?.();
    const m = process.memoryUsage();
    const mib = (v: number) => Math.round(v / 1048576);
    memory[name] = { rss: mib(m.rss), heapUsed: mib(m.heapUsed), heapTotal: mib(m.heapTotal), external: mib(m.external), arrayBuffers: mib(m.arrayBuffers) };
  };
  // The simulated day starts now (on a minute), so nothing sees a date far from the real one at first.
  const clock = new SimClock(Math.floor(Date.now() / MINUTE) * MINUTE);
  const startMs = clock.millis;
  const dayEnd = startMs + shape.hours * 3_600_000;
  const plan = planDay({ orders: shape.orders, shops: shape.shops, startMs, durationMs: shape.hours * 3_600_000, random: seededRandom(20_261_122) });

  mark("beforeSetup");
  const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", dbPath: ":memory:", clock, tickMs: 3_600_000 });
  const counting = await startCountingProxy(sandbox.origin, () => clock.millis);
  const appPort = await freePort();
  const domains = Array.from({ length: shape.shops }, (_, i) => `day-shop-${i + 1}.myshopify.com`);
  const standins: ShopifyStandin[] = [];
  for (const shopDomain of domains) {
    standins.push(await startShopifyStandin({ port: 0, host: "127.0.0.1", appUrl: `http://127.0.0.1:${appPort}`, shopDomain, now: () => clock.now() }));
  }
  mark("afterStandins");
  const router = await startShopRouter(new Map(domains.map((d, i) => [d, standins[i]!.origin])));
  const bench = await startBenchApp({
    databaseUrl: options.databaseUrl,
    port: appPort,
    sandboxBaseUrl: `${counting.url}/api/v1`,
    paymentsAppsEndpoint: `${router.url}/{shop}/payments_apps/api/{version}/graphql.json`,
    shops: domains.map((domain, i) => ({ domain, accessToken: standins[i]!.accessToken })),
    // The product's own limits (60/min, 2,000/day; 15/min and 200/day for new orders), as the sandbox's.
    quotaLimits: null,
    // The driver runs the workers' passes itself, at the moments the workers would wake.
    workers: false,
    serving: "prebuilt",
    clock,
  });
  const db = bench.services.db;
  const drop = await startWebhookDropProxy({
    appUrl: bench.app.url,
    dropShare: DROP_SHARE,
    random: seededRandom(7),
    secrets: new Map(bench.shops.map((s) => [s.webhookToken, s.secretKeyHex])),
    nowMs: () => clock.millis,
  });

  const control = async (path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${sandbox.origin}${path}`, { method: "POST", headers: { "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await response.text();
    if (!response.ok) throw new Error(`sandbox ${path} answered ${response.status}: ${text.slice(0, 200)}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  for (const shop of bench.shops) {
    await control(`/sandbox/devices/${encodeURIComponent(shop.deviceKey)}/settings`, { notification_url: `${drop.url}/gateway/webhooks/${shop.webhookToken}` });
  }
  counting.calls.length = 0;
  mark("afterSetup");

  const tracked: Tracked[] = plan.map((p) => ({ plan: p, sessionId: null, gid: null, orderId: null, status: "none", expiresAt: null, gatewayFinalAt: null }));
  // Every status change in the sandbox sends exactly one webhook: the driver counts them to know when all have arrived.
  let expectedWebhooks = 0;
  let waitTimeouts = 0;
  let reconcilePasses = 0;
  let skippedPasses = 0;
  const realMs: Record<string, number> = { create: 0, actions: 0, ticks: 0, waits: 0, reconcile: 0 };
  const timed = async <T>(bucket: string, work: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await work();
    } finally {
      realMs[bucket] = (realMs[bucket] ?? 0) + performance.now() - t0;
    }
  };

  /** Moves the clock; true when expiries were applied (their webhooks are then on the way). */
  async function advance(to: number): Promise<boolean> {
    if (to <= clock.millis) return false;
    clock.set(to);
    // Apply due expiries now, before anything reads an order (a read would apply them lazily,
    // unseen). Expiry (PE to EX) is the only time-based change these orders can go through.
    const due = tracked.filter((t) => t.status === "PE" && t.expiresAt !== null && t.expiresAt <= to);
    if (due.length === 0) return false;
    const tick = await timed("ticks", () => control("/sandbox/tick"));
    expectedWebhooks += Number(tick.changed ?? 0);
    for (const t of due) {
      t.status = "EX";
      t.gatewayFinalAt = t.expiresAt;
    }
    return true;
  }

  /**
   * Whether the reconciler pass at this minute can do anything: a pass with no payment due
   * (the reconciler's own isDue) makes no gateway call and changes nothing, so it is skipped
   * to keep the simulation fast. Payments still in "started" always run the pass.
   */
  async function reconcilerHasWork(): Promise<boolean> {
    const now = clock.now();
    const open = await db.payment.findMany({ where: { state: { in: [...OPEN_PAYMENT_STATES] } }, select: { state: true, gatewayOrderId: true, createdAt: true, lastCheckedAt: true } });
    return open.some((p) => p.state === "started" || (p.gatewayOrderId !== null && isDue(p, now)));
  }

  async function quiesce(): Promise<void> {
    await timed("waits", waitIdle);
  }

  /**
   * Waits until every webhook the sandbox owes has arrived, then runs the app's inbox and
   * outbox passes (the functions its workers run when woken) until both have nothing due.
   */
  async function waitIdle(): Promise<void> {
    const arrived = await pollUntil(() => (drop.stats.arrived >= expectedWebhooks && drop.stats.inFlight === 0 ? true : null), 15_000, 1);
    if (!arrived) waitTimeouts++;
    for (let round = 0; round < 10; round++) {
      const inbox = await processWebhookInbox(bench.services, { worker: WORKER });
      const outbox = await deliverDueMessages(bench.services, { worker: WORKER });
      if (inbox.processed + inbox.duplicates + inbox.retried === 0 && outbox.done + outbox.failed + outbox.retry + outbox.skipped === 0) return;
    }
  }

  async function perform(event: DayEvent): Promise<void> {
    const t = tracked[event.order]!;
    const p = t.plan;
    if (event.kind === "create") {
      counting.phase = "create";
      const { session, delivery } = await standins[p.shop]!.state.startPayment({ test: true, amount: p.amount, currency: "EUR" });
      counting.phase = "webhook";
      if (delivery.status !== 200) {
        problems.push(`order ${p.index}: payment session answered ${delivery.status} ${delivery.body.slice(0, 160)}`);
        return;
      }
      const payment = await db.payment.findFirst({ where: { shopifyPaymentId: session.id } });
      if (!payment?.gatewayOrderId) {
        problems.push(`order ${p.index}: no gateway order recorded`);
        return;
      }
      // The app records Payment.createdAt with the database's wall clock, not its injected
      // clock; the reconciler's schedule is based on it, so it is set to the simulated time.
      await db.payment.update({ where: { id: payment.id }, data: { createdAt: clock.now() } });
      Object.assign(t, { sessionId: session.id, gid: session.gid, orderId: payment.gatewayOrderId, status: "NR" });
      return;
    }
    if (!t.orderId) return;
    const body =
      event.kind === "choose"
        ? { action: "choose_currency", currency: p.currency }
        : event.kind === "pay"
          ? { action: "pay", amount: p.fate === "underpaid" ? "less" : "exact" }
          : { action: "confirm" };
    const order = await control(`/sandbox/orders/${t.orderId}/actions`, body);
    const status = String(order.status);
    if (status !== t.status) expectedWebhooks++;
    t.status = status;
    if (event.kind === "choose" && typeof order.expired_time === "string") t.expiresAt = Date.parse(order.expired_time);
    if (["CO", "IA", "OC", "EX", "FA"].includes(status) && t.gatewayFinalAt === null) t.gatewayFinalAt = clock.millis;
  }

  async function openPayments(): Promise<number> {
    return db.payment.count({ where: { state: { notIn: ["paid", "failed", "not_started"] } } });
  }

  const events = dayEvents(plan);
  let next = 0;
  const hardEnd = dayEnd + 6 * 3_600_000;
  let lastReport = performance.now();
  counting.phase = "webhook";
  for (let minute = startMs + RECONCILE_EVERY_MS; minute <= hardEnd; minute += RECONCILE_EVERY_MS) {
    while (next < events.length && events[next]!.at < minute) {
      const event = events[next++]!;
      if (await advance(event.at)) await quiesce();
      await timed(event.kind === "create" ? "create" : "actions", () => perform(event));
      await quiesce();
    }
    if (await advance(minute)) await quiesce();
    if (await reconcilerHasWork()) {
      counting.phase = "reconcile";
      reconcilePasses++;
      await timed("reconcile", () => reconcileOnce(bench.services, { worker: WORKER }));
      counting.phase = "webhook";
      await quiesce();
    } else skippedPasses++;
    if (performance.now() - lastReport > 20_000) {
      lastReport = performance.now();
      options.log(`  quota: simulated ${((minute - startMs) / 3_600_000).toFixed(1)} h, ${next}/${events.length} events, ${counting.calls.length} gateway calls`);
    }
    if (minute >= dayEnd && next >= events.length && (await openPayments()) === 0) break;
  }
  const simulatedEnd = clock.millis;
  mark("afterDay");

  // What happened to each order, in Shopify and in the app.
  const expected: Record<Fate, "RESOLVED" | "REJECTED"> = { paid: "RESOLVED", underpaid: "REJECTED", abandoned: "REJECTED" };
  let settledCount = 0;
  let asExpected = 0;
  const finalDelays: number[] = [];
  for (const t of tracked) {
    if (!t.gid) continue;
    const state = standins[t.plan.shop]!.state.session(t.gid)?.state;
    if (state && (state.code === "RESOLVED" || state.code === "REJECTED")) {
      settledCount++;
      if (state.code === expected[t.plan.fate]) asExpected++;
      if (t.gatewayFinalAt !== null) finalDelays.push((Date.parse(state.at) - t.gatewayFinalAt) / 1000);
    }
  }
  const stateEvents = await db.paymentEvent.findMany({ where: { type: "state" }, select: { detail: true } });
  const bySource = { byWebhook: 0, byReconciler: 0, other: 0 };
  for (const e of stateEvents) {
    const detail = JSON.parse(e.detail ?? "{}") as { to?: string; source?: string };
    if (detail.to !== "paid" && detail.to !== "failed") continue;
    if (detail.source === "webhook") bySource.byWebhook++;
    else if (detail.source === "reconcile") bySource.byReconciler++;
    else bySource.other++;
  }

  // The app's calls, from the counting proxy.
  const calls = counting.calls;
  const byEndpoint: Record<string, number> = {};
  const byPhase: Record<string, number> = {};
  const appByDevice = new Map<string, number[]>();
  for (const c of calls) {
    byEndpoint[c.endpoint] = (byEndpoint[c.endpoint] ?? 0) + 1;
    byPhase[c.phase] = (byPhase[c.phase] ?? 0) + 1;
    appByDevice.set(c.device, [...(appByDevice.get(c.device) ?? []), c.at]);
  }
  const status429 = calls.filter((c: GatewayCallRecord) => c.status === 429).length;
  const otherErrors = calls.filter((c) => c.status !== 429 && c.status >= 400).length;

  // The naive approach on the same timeline: a create, then one read per open order per minute until final.
  const deviceOfShop = bench.shops.map((s) => deviceTag(s.deviceKey));
  const naiveByDevice = new Map<string, number[]>();
  let polls = 0;
  for (const t of tracked) {
    if (!t.orderId) continue;
    const device = deviceOfShop[t.plan.shop]!;
    const times = naiveByDevice.get(device) ?? naiveByDevice.set(device, []).get(device)!;
    times.push(t.plan.createAt);
    const finalAt = t.gatewayFinalAt ?? simulatedEnd;
    const n = Math.max(1, Math.ceil((finalAt - t.plan.createAt) / MINUTE));
    for (let k = 1; k <= n; k++) times.push(t.plan.createAt + k * MINUTE);
    polls += n;
  }
  const created = tracked.filter((t) => t.orderId).length;
  const naiveCalls = created + polls;

  const fates: Record<Fate, number> = { paid: 0, underpaid: 0, abandoned: 0 };
  for (const p of plan) fates[p.fate]++;
  const appPeak = peakPerMinute(appByDevice).peak;
  const unsettled = plan.length - settledCount;
  if (unsettled > 0) problems.push(`${unsettled} orders were not settled in Shopify`);
  if (waitTimeouts > 0) problems.push(`${waitTimeouts} waits for webhooks or workers timed out (15 s)`);
  if (drop.stats.arrived !== expectedWebhooks) problems.push(`${expectedWebhooks} webhooks were expected and ${drop.stats.arrived} arrived`);
  const result: QuotaDayResult = {
    plan: { orders: plan.length, shops: shape.shops, simulatedHours: round((simulatedEnd - startMs) / 3_600_000, 2), dropShare: DROP_SHARE, fates, reconcileEverySimSeconds: RECONCILE_EVERY_MS / 1000 },
    reconcilerPasses: { run: reconcilePasses, skippedWithNothingDue: skippedPasses },
    settled: { orders: plan.length, settled: settledCount, asExpected, unsettled, ...bySource },
    gatewayFinalToShopifySimSeconds: summarize(finalDelays),
    app: {
      calls: calls.length,
      callsPerOrder: round(calls.length / plan.length),
      byEndpoint,
      byPhase,
      peakPerDeviceMinute: appPeak,
      status429,
      otherErrors,
    },
    naive: { calls: naiveCalls, callsPerOrder: round(naiveCalls / plan.length), polls, peakPerDeviceMinute: peakPerMinute(naiveByDevice).peak },
    webhooks: { ...drop.stats },
    targets: {
      callsPerOrder: TARGET_CALLS_PER_ORDER,
      callsPerOrderMet: calls.length / plan.length < TARGET_CALLS_PER_ORDER,
      everyOrderSettled: unsettled === 0 && asExpected === plan.length,
      no429: status429 === 0,
      peakWithinLimit: appPeak <= GATEWAY_LIMIT_PER_MINUTE,
    },
    appLogs: bench.logs,
    realSeconds: round((performance.now() - realStart) / 1000, 1),
    realSecondsBySpending: Object.fromEntries(Object.entries(realMs).map(([k, v]) => [k, round(v / 1000, 1)])),
    memoryCheckpointsMiB: memory,
    problems,
  };

  await drop.close();
  await bench.close();
  await router.close();
  for (const s of standins) await s.close();
  await counting.close();
  await sandbox.close();
  return result;
}
