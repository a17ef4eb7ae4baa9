// Benchmark 3: the gateway request quota over a simulated day. Several shops (the gateway
// allows 200 new orders a day per device) take their orders through the real app; shoppers
// pay, underpay or walk away; 30% of the gateway's webhooks are lost on the way; the app's
// webhook processing and its reconciler (one pass per simulated minute, the app's default
// cadence) settle everything. Every gateway call is counted at a proxy in front of the
// sandbox. A shopper's browser tab on the gateway's page follows the page's redirect back to
// the shop (the app's return route, which reads the order while its payment is not final),
// unless the shopper closed it. A run simulates some of the day's shops (`part` of `parts`):
// a shop's calls depend on its own orders only, so parts run in parallel (one per database)
// and lib/quota-day-summary.ts adds them up into the day.
import { performance } from "node:perf_hooks";
import { startShopifyStandin, type ShopifyStandin } from "../dev/shopify-standin/server";
import { isDue, isVerificationDue, reconcileOnce } from "../app/payments/reconcile";
import { deliverDueMessages } from "../app/payments/outbox";
import { processWebhookInbox } from "../app/payments/process-webhooks";
import { OPEN_PAYMENT_STATES } from "../app/payments/payment-state";
import { startSandbox } from "../sandbox/server";
import { startBenchApp, type LogCounts } from "./lib/bench-app";
import { startCountingProxy, deviceTag, type GatewayCallRecord } from "./lib/counting-proxy";
import { dayEvents, planDay, type DayEvent, type Fate, type PlannedOrder } from "./lib/day-schedule";
import { freePort } from "../test/support/free-port";
import { pollUntil } from "./lib/pool";
import { startShopRouter } from "./lib/shop-router";
import { SimClock } from "./lib/sim-clock";
import { round, seededRandom } from "./lib/stats";
import { startWebhookDropProxy, type DropProxyStats } from "./lib/webhook-drop-proxy";

const MINUTE = 60_000;
export const DROP_SHARE = 0.3;
/**
 * Shoppers who keep the gateway's page open until it sends them back to the shop: most who
 * pay wait for it; most who walk away close it, and the rest see it expire there.
 */
export const TAB_KEPT_OPEN_SHARE: Record<Fate, number> = { paid: 0.9, underpaid: 0.9, abandoned: 0.2 };
/** The app's default RECONCILE_INTERVAL_MS. */
const RECONCILE_EVERY_MS = 60_000;
const WORKER = "bench-day";

/** One order as the day went, for the summary. */
export interface OrderOutcome {
  index: number;
  shop: number;
  device: string;
  fate: Fate;
  createAt: number;
  created: boolean;
  /** Simulated time the gateway reached a final status (CO, IA, EX). */
  gatewayFinalAt: number | null;
  shopify: { code: string; at: number } | null;
}

export interface QuotaDayPart {
  database: string;
  shape: { orders: number; shops: number; hours: number };
  shops: number[];
  startMs: number;
  simulatedEndMs: number;
  orders: OrderOutcome[];
  calls: GatewayCallRecord[];
  settledBySource: { byWebhook: number; byReconciler: number; other: number };
  webhooks: DropProxyStats;
  reconcilerPasses: { run: number; skippedWithNothingDue: number };
  appLogs: LogCounts;
  realSeconds: number;
  /** Where the real time went (the simulated clock only moves between these). */
  realSecondsBySpending: Record<string, number>;
  /** CPU seconds used by this process over the whole part. */
  cpuSeconds: number;
  /** Shoppers' tabs: sent back to the shop by the gateway's page, or closed before that. */
  shopperTabs: { returned: number; closed: number; returnReads: number };
  /**
   * Each return's answer, in real milliseconds from the request to the end of the answer, by
   * the gateway read it made: a listing of the shop's orders (which settles the shop's other
   * open payments while the shopper waits), a read of its own order, or none.
   */
  returnAnswers: { read: ReturnRead; ms: number }[];
  /** Memory of this process (sandbox, stand-ins, proxies and app together), after a full GC. */
  memoryCheckpointsMiB: Record<string, Record<string, number>>;
  problems: string[];
}

export type ReturnRead = "listing" | "order" | "none";

export const DAY_SHAPE = { full: { orders: 1000, shops: 6, hours: 24 }, quick: { orders: 200, shops: 2, hours: 6 } } as const;

/** Whether the gateway's webhook about this order's status change gets lost: a fixed draw per order and status, whatever process simulates it. */
function lost(orderIndex: number, status: string): boolean {
  const salt = [...status].reduce((h, ch) => h * 31 + ch.charCodeAt(0), 7);
  return seededRandom(orderIndex * 7919 + salt)() < DROP_SHARE;
}

/** Whether this order's shopper keeps the gateway's page open: a fixed draw per order. */
function tabKeptOpen(orderIndex: number, fate: Fate): boolean {
  return seededRandom(orderIndex * 104_729 + 17)() < TAB_KEPT_OPEN_SHARE[fate];
}

/** Where the gateway's page sends the shopper for a status (sandbox/pay-page.ts redirectTarget); null: it stays. */
function redirectOutcome(status: string): "ok" | "ko" | "standby" | null {
  if (status === "CO" || status === "CM") return "ok";
  if (["EX", "CA", "FA", "IA", "OC", "DE"].includes(status)) return "ko";
  if (status === "AC") return "standby";
  return null;
}

interface Tracked {
  plan: PlannedOrder;
  sessionId: string | null;
  gid: string | null;
  payment: { id: string; shopId: string } | null;
  /** The shopper's tab on the gateway's page: open, closed by the shopper, or gone back to the shop. */
  tab: "open" | "closed" | "left";
  orderId: string | null;
  status: string;
  expiresAt: number | null;
  gatewayFinalAt: number | null;
}

export async function runQuotaDayPart(options: { databaseUrl: string; quick: boolean; part: number; parts: number; label: string; log(line: string): void }): Promise<QuotaDayPart> {
  const realStart = performance.now();
  const shape = options.quick ? DAY_SHAPE.quick : DAY_SHAPE.full;
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
  const myShops = Array.from({ length: shape.shops }, (_, i) => i).filter((i) => i % options.parts === options.part);

  mark("beforeSetup");
  const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", dbPath: ":memory:", clock, tickMs: 3_600_000 });
  const counting = await startCountingProxy(sandbox.origin, () => clock.millis);
  const appPort = await freePort();
  const domains = myShops.map((i) => `day-shop-${i + 1}.myshopify.com`);
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
    unthrottled: false,
    // The driver runs the workers' passes itself, at the moments the workers would wake.
    workers: false,
    serving: "prebuilt",
    clock,
  });
  const db = bench.services.db;
  const orderIndexById = new Map<string, number>();
  const drop = await startWebhookDropProxy({
    appUrl: bench.app.url,
    lose: (identifier, status) => lost(orderIndexById.get(identifier) ?? -1, status),
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

  const slotOf = new Map(myShops.map((shop, slot) => [shop, slot]));
  const tracked: Tracked[] = plan.map((p) => ({ plan: p, sessionId: null, gid: null, payment: null, tab: tabKeptOpen(p.index, p.fate) ? "open" : "closed", orderId: null, status: "none", expiresAt: null, gatewayFinalAt: null }));
  // Every status change in the sandbox sends exactly one webhook: the driver counts them to know when all have arrived.
  let expectedWebhooks = 0;
  let waitTimeouts = 0;
  let reconcilePasses = 0;
  let skippedPasses = 0;
  /** Tabs the gateway's page is about to send back to the shop, with the outcome it sends. */
  const returning: { t: Tracked; outcome: "ok" | "ko" | "standby" }[] = [];
  let returned = 0;
  const returnAnswers: { read: ReturnRead; ms: number }[] = [];
  const realMs: Record<string, number> = { create: 0, actions: 0, ticks: 0, waits: 0, reconcile: 0, returns: 0 };
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
      tabFollows(t);
    }
    return true;
  }

  /**
   * Whether the reconciler pass at this minute can do anything: a pass with no payment due
   * (the reconciler's own isDue, or a verification due) makes no gateway call and changes
   * nothing, so it is skipped to keep the simulation fast. Payments still in "started"
   * always run the pass; a pass that runs may still make no call (listings are spaced).
   */
  async function reconcilerHasWork(): Promise<boolean> {
    const now = clock.now();
    const open = await db.payment.findMany({ where: { state: { in: [...OPEN_PAYMENT_STATES] } }, select: { state: true, gatewayOrderId: true, createdAt: true, lastCheckedAt: true } });
    if (open.some((p) => p.state === "started" || (p.gatewayOrderId !== null && isDue(p, now)))) return true;
    // Payments settled from a signed webhook alone are due for verification by a listing.
    const unverified = await db.payment.findMany({ where: { unverifiedSince: { not: null } }, select: { unverifiedSince: true } });
    return unverified.some((p) => isVerificationDue(p, now));
  }

  /** The status changed: a tab still on the gateway's page follows its redirect, if it gives one. */
  function tabFollows(t: Tracked): void {
    const outcome = redirectOutcome(t.status);
    if (t.tab !== "open" || outcome === null || t.payment === null) return;
    t.tab = "left";
    returning.push({ t, outcome });
  }

  /**
   * The tabs sent back follow the redirect: the app's return URL for that outcome, as the app
   * gave it to the gateway, at the simulated time. The page polls its status every 2 s; the
   * webhook of the change has been delivered and processed by then (quiesce), as it usually is.
   */
  async function followReturns(): Promise<void> {
    const phase = counting.phase;
    counting.phase = "return";
    try {
      for (const { t, outcome } of returning.splice(0)) {
        const callsBefore = counting.calls.length;
        const t0 = performance.now();
        const response = await fetch(bench.services.links.returnUrl(t.payment!, outcome), { redirect: "manual" });
        await response.arrayBuffer();
        const made = counting.calls.slice(callsBefore).map((c) => c.endpoint);
        returnAnswers.push({ read: made.includes("orders.list") ? "listing" : made.includes("orders.info") ? "order" : "none", ms: performance.now() - t0 });
        returned++;
        if (response.status !== 200 && response.status !== 303 && response.status !== 302) problems.push(`order ${t.plan.index}: the shopper's return (${outcome}) answered ${response.status}`);
      }
    } finally {
      counting.phase = phase;
    }
  }

  async function quiesce(): Promise<void> {
    await timed("waits", waitIdle);
    if (returning.length === 0) return;
    await timed("returns", followReturns);
    // A return may queue messages for Shopify or settle the payment: run the passes again.
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
      const { session, delivery } = await standins[slotOf.get(p.shop)!]!.state.startPayment({ test: true, amount: p.amount, currency: "EUR" });
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
      Object.assign(t, { sessionId: session.id, gid: session.gid, payment: { id: payment.id, shopId: payment.shopId }, orderId: payment.gatewayOrderId, status: "NR" });
      orderIndexById.set(payment.gatewayOrderId, p.index);
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
    const changed = status !== t.status;
    if (changed) expectedWebhooks++;
    t.status = status;
    if (changed) tabFollows(t);
    if (event.kind === "choose" && typeof order.expired_time === "string") t.expiresAt = Date.parse(order.expired_time);
    if (["CO", "IA", "OC", "EX", "FA"].includes(status) && t.gatewayFinalAt === null) t.gatewayFinalAt = clock.millis;
  }

  /** Payments not yet final, or final from a signed webhook but not yet verified by a listing. */
  async function openPayments(): Promise<number> {
    return db.payment.count({ where: { OR: [{ state: { in: [...OPEN_PAYMENT_STATES] } }, { unverifiedSince: { not: null } }] } });
  }

  const events = dayEvents(plan.filter((p) => slotOf.has(p.shop)));
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
      options.log(`${options.label}: quota: simulated ${((minute - startMs) / 3_600_000).toFixed(1)} h, ${next}/${events.length} events, ${counting.calls.length} gateway calls`);
    }
    if (minute >= dayEnd && next >= events.length && (await openPayments()) === 0) break;
  }
  const simulatedEnd = clock.millis;
  mark("afterDay");

  const orders: OrderOutcome[] = tracked
    .filter((t) => slotOf.has(t.plan.shop))
    .map((t) => {
      const state = t.gid ? standins[slotOf.get(t.plan.shop)!]!.state.session(t.gid)?.state : undefined;
      return {
        index: t.plan.index,
        shop: t.plan.shop,
        device: deviceTag(bench.shops[slotOf.get(t.plan.shop)!]!.deviceKey),
        fate: t.plan.fate,
        createAt: t.plan.createAt,
        created: t.orderId !== null,
        gatewayFinalAt: t.gatewayFinalAt,
        shopify: state && state.code !== "OPEN" ? { code: state.code, at: Date.parse(state.at) } : null,
      };
    });
  const stateEvents = await db.paymentEvent.findMany({ where: { type: "state" }, select: { detail: true } });
  const settledBySource = { byWebhook: 0, byReconciler: 0, other: 0 };
  for (const e of stateEvents) {
    const detail = JSON.parse(e.detail ?? "{}") as { to?: string; source?: string };
    if (detail.to !== "paid" && detail.to !== "failed") continue;
    if (detail.source === "webhook" || detail.source === "signed_webhook") settledBySource.byWebhook++;
    else if (detail.source === "reconcile") settledBySource.byReconciler++;
    else settledBySource.other++;
  }
  if (waitTimeouts > 0) problems.push(`${waitTimeouts} waits for webhooks timed out (15 s)`);
  if (drop.stats.arrived !== expectedWebhooks) problems.push(`${expectedWebhooks} webhooks were expected and ${drop.stats.arrived} arrived`);
  const cpu = process.cpuUsage();
  const part: QuotaDayPart = {
    database: options.label,
    shape,
    shops: myShops,
    startMs,
    simulatedEndMs: simulatedEnd,
    orders,
    calls: counting.calls,
    settledBySource,
    webhooks: { ...drop.stats },
    reconcilerPasses: { run: reconcilePasses, skippedWithNothingDue: skippedPasses },
    shopperTabs: { returned, closed: tracked.filter((t) => slotOf.has(t.plan.shop) && t.orderId !== null && t.tab === "closed").length, returnReads: counting.calls.filter((c) => c.phase === "return").length },
    returnAnswers,
    appLogs: bench.logs,
    realSeconds: round((performance.now() - realStart) / 1000, 1),
    realSecondsBySpending: Object.fromEntries(Object.entries(realMs).map(([k, v]) => [k, round(v / 1000, 1)])),
    cpuSeconds: round((cpu.user + cpu.system) / 1e6, 1),
    memoryCheckpointsMiB: memory,
    problems,
  };

  await drop.close();
  await bench.close();
  await router.close();
  for (const s of standins) await s.close();
  await counting.close();
  await sandbox.close();
  return part;
}
