// Benchmark 2: the gateway webhook door. Signed webhooks for real orders of the shop (the
// sandbox's own CO notification bodies, freshly signed with the shop's Secret Key) are
// POSTed to /gateway/webhooks/<token> as a steady stream and in bursts: how many are answered
// per second, how fast the 200 comes (each stored durably first), and how long until the
// Shopify stand-in receives the resulting paymentSessionResolve. Afterwards every accepted
// webhook must be processed and every payment resolved exactly once.
import { signWebhook } from "../app/gateway/webhook-signature";
import { openDatabase } from "../app/db/database.server";
import type { MemoryPeak } from "./lib/child-process";
import { runClosedLoop, type LoadRequest, type LoadResult } from "./lib/http-load";
import { mapLimit, pollUntil } from "./lib/pool";
import type { ProcessStack } from "./lib/process-stack";
import { performance } from "node:perf_hooks";
import { round, seededRandom, summarize, type LatencySummary } from "./lib/stats";

export interface WebhookLevel {
  /** 0 = steady: Poisson arrivals at STEADY_PER_SEC, each on its own connection. */
  concurrency: number;
  webhooks: number;
  answeredPerSec: number;
  statuses: Record<string, number>;
  answerMs: LatencySummary;
  /** From sending the webhook to the stand-in receiving paymentSessionResolve (null with the workers off). */
  webhookToResolveMs: LatencySummary | null;
  /** Webhooks whose resolve never arrived within the wait. */
  missingResolves: number;
  /** Payments resolved per second, first send to last resolve (null with the workers off). */
  settledPerSec: number | null;
  meetsTarget: { answerP99: boolean; resolveP99: boolean | null };
}

export interface WebhookIntakeResult {
  /** False: the app ran without its workers (--no-workers); only the door's answers were measured. */
  workers: boolean;
  /** Mean arrival rate of the steady level (concurrency 0). */
  steadyPerSec: number;
  levels: WebhookLevel[];
  checks: {
    accepted: number;
    stored: number;
    processed: number;
    unprocessed: number;
    paymentsResolvedOnce: number;
    paymentsResolvedMoreThanOnce: number;
    paymentsNotResolved: number;
  };
  /** "Met" means met at every level. */
  targets: { answerP99Ms: number; webhookToResolveP99Ms: number; answerP99Met: boolean; resolveP99Met: boolean | null; countsOk: boolean };
  appMemory: MemoryPeak;
  setupSeconds: number;
  problems: string[];
}

interface PreparedOrder {
  sessionId: string;
  gid: string;
  orderId: string;
  body: string;
}

const TARGET = { answerP99Ms: 20, webhookToResolveP99Ms: 1000 };

/** Mean arrivals per second of the steady level: far above a shop's real webhook rate, below saturation. */
const STEADY_PER_SEC = 5;

/**
 * The steady level: webhooks arrive on their own schedule, as a gateway sends them (open loop,
 * a Poisson process with a fixed seed, each on a new connection), whether or not the app has
 * finished with the ones before.
 */
async function steady(origin: string, n: number, signed: (i: number) => LoadRequest): Promise<LoadResult> {
  const random = seededRandom(20261123);
  const started = performance.now();
  let at = 0;
  const sends: Promise<LoadResult>[] = [];
  for (let i = 0; i < n; i++) {
    const wait = started + at - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    sends.push(runClosedLoop({ origin, concurrency: 1, count: 1, timeLimitMs: 30_000, requests: () => signed(i) }).then((one) => ({ ...one, sent: one.sent.map((s) => ({ ...s, index: i })) })));
    at += (-Math.log(1 - random()) / STEADY_PER_SEC) * 1000;
  }
  const sent = (await Promise.all(sends)).flatMap((r) => r.sent);
  const elapsedMs = performance.now() - started;
  const statuses: Record<string, number> = {};
  for (const s of sent) statuses[String(s.status)] = (statuses[String(s.status)] ?? 0) + 1;
  return { sent, elapsedMs, throughput: (sent.length / elapsedMs) * 1000, statuses, stoppedByTime: false };
}

export async function benchWebhookIntake(stack: ProcessStack, options: { quick: boolean; workers: boolean; databaseUrl: string; log(line: string): void }): Promise<WebhookIntakeResult> {
  // c = 0: the steady level (see steady()); then bursts from c clients at once.
  const levels = options.quick ? [{ c: 0, n: 30 }, { c: 10, n: 30 }, { c: 50, n: 60 }] : [{ c: 0, n: 150 }, { c: 10, n: 150 }, { c: 50, n: 250 }];
  const total = levels.reduce((sum, l) => sum + l.n, 0);
  const problems: string[] = [];
  const setupStarted = Date.now();
  const { shop } = stack;

  // The sandbox records the notifications without sending them: the benchmark sends them.
  await stack.control(`/sandbox/devices/${shop.deviceKey}/webhook-faults`, { mode: "drop" });
  const sessions = await mapLimit(Array.from({ length: total }), 8, async () => {
    const { session, delivery } = await stack.standin.state.startPayment({ test: true });
    if (delivery.status !== 200) throw new Error(`payment session refused while preparing: ${delivery.status} ${delivery.body.slice(0, 200)}`);
    return session;
  });
  const listed = await fetch(`${stack.sandbox.info.baseUrl}/orders/`, { headers: { "X-Device-Id": shop.deviceKey } });
  const orders = (await listed.json()) as { identifier: string; reference: string | null }[];
  const orderBySession = new Map(orders.map((o) => [o.reference, o.identifier]));
  await mapLimit(sessions, 8, async (session) => {
    const orderId = orderBySession.get(session.id);
    if (!orderId) throw new Error(`no sandbox order for session ${session.id}`);
    for (const action of [{ action: "choose_currency", currency: "BTC" }, { action: "pay", amount: "exact" }, { action: "confirm" }]) {
      await stack.control(`/sandbox/orders/${orderId}/actions`, action);
    }
  });
  const deliveries = (await stack.control(`/sandbox/webhooks/deliveries?device=${encodeURIComponent(shop.deviceKey)}`, undefined, "GET")) as { order: string; status: string; body: string }[];
  const coBody = new Map(deliveries.filter((d) => d.status === "CO").map((d) => [d.order, d.body]));
  const prepared: PreparedOrder[] = sessions.map((session) => {
    const orderId = orderBySession.get(session.id)!;
    const body = coBody.get(orderId);
    if (!body) throw new Error(`the sandbox recorded no CO notification for order ${orderId}`);
    return { sessionId: session.id, gid: session.gid, orderId, body };
  });
  const setupSeconds = round((Date.now() - setupStarted) / 1000, 1);
  options.log(`  webhooks: ${total} paid orders prepared in ${setupSeconds} s`);

  await stack.app.call("memory.reset");
  const results: WebhookLevel[] = [];
  let offset = 0;
  for (const { c, n } of levels) {
    const batch = prepared.slice(offset, offset + n);
    offset += n;
    const signed = (i: number) => {
      const order = batch[i]!;
      // Signed at send time: the app refuses nonces older than 20 s.
      const nonce = String(Math.floor(Date.now() / 1000));
      return {
        path: `/gateway/webhooks/${shop.webhookToken}`,
        headers: { "content-type": "application/json", "x-nonce": nonce, "x-signature": signWebhook({ secretHex: shop.secretKeyHex, nonce, rawBody: order.body }) },
        body: order.body,
      };
    };
    const run =
      c > 0
        ? await runClosedLoop({ origin: stack.app.info.url, concurrency: c, count: n, timeLimitMs: 120_000, requests: signed })
        : await steady(stack.app.info.url, n, signed);
    const accepted = run.sent.filter((s) => s.status === 200);
    if (accepted.length !== n) problems.push(`concurrency ${c}: ${n - accepted.length} webhooks not answered 200 (${JSON.stringify(run.statuses)})`);
    const wanted = new Set(accepted.map((s) => batch[s.index]!.gid));
    if (options.workers) await pollUntil(() => ([...wanted].every((gid) => stack.standin.state.session(gid)?.state.code === "RESOLVED") ? true : null), 60_000, 25);
    const resolveAt = new Map<string, number>();
    for (const op of stack.standin.state.operations()) {
      if (op.operationName !== "PaymentSessionResolve" || op.status !== 200) continue;
      for (const gid of op.sessionIds) if (wanted.has(gid) && !resolveAt.has(gid)) resolveAt.set(gid, Date.parse(op.at));
    }
    const toResolve = accepted.flatMap((s) => {
      const at = resolveAt.get(batch[s.index]!.gid);
      return at === undefined ? [] : [at - s.sentAt];
    });
    const firstSent = Math.min(...run.sent.map((s) => s.sentAt));
    const lastResolve = Math.max(...resolveAt.values());
    const level: WebhookLevel = {
      concurrency: c,
      webhooks: n,
      answeredPerSec: round(run.throughput, 1),
      statuses: run.statuses,
      answerMs: summarize(run.sent.map((s) => s.latencyMs)),
      webhookToResolveMs: options.workers ? summarize(toResolve) : null,
      missingResolves: options.workers ? accepted.length - toResolve.length : 0,
      settledPerSec: options.workers ? round((resolveAt.size / Math.max(1, lastResolve - firstSent)) * 1000, 1) : null,
      meetsTarget: { answerP99: false, resolveP99: null },
    };
    level.meetsTarget = {
      answerP99: level.answerMs.p99 < TARGET.answerP99Ms,
      resolveP99: level.webhookToResolveMs ? level.webhookToResolveMs.p99 < TARGET.webhookToResolveP99Ms : null,
    };
    results.push(level);
    options.log(
      `  webhooks ${c === 0 ? `steady ${STEADY_PER_SEC}/s` : `c=${c}`}: ${level.answeredPerSec}/s answered, answer p50 ${level.answerMs.p50} ms p99 ${level.answerMs.p99} ms${level.webhookToResolveMs ? `; to resolve p50 ${level.webhookToResolveMs.p50} ms p99 ${level.webhookToResolveMs.p99} ms; ${level.settledPerSec} settled/s` : ""}${level.missingResolves ? `; ${level.missingResolves} never resolved` : ""}`,
    );
  }
  const appMemory = await stack.app.call<MemoryPeak>("memory.peak");

  // Let the inbox and outbox finish whatever is left, then count.
  const db = openDatabase(options.databaseUrl);
  try {
    if (options.workers) await pollUntil(async () => ((await db.gatewayWebhook.count({ where: { processedAt: null } })) === 0 ? true : null), 30_000, 100);
    const stored = await db.gatewayWebhook.count({ where: { shopId: shop.shopId } });
    const processed = await db.gatewayWebhook.count({ where: { shopId: shop.shopId, processedAt: { not: null } } });
    const resolvesByGid = new Map<string, number>();
    for (const op of stack.standin.state.operations()) {
      if (op.operationName !== "PaymentSessionResolve" || op.status !== 200) continue;
      for (const gid of op.sessionIds) resolvesByGid.set(gid, (resolvesByGid.get(gid) ?? 0) + 1);
    }
    const counts = prepared.map((p) => resolvesByGid.get(p.gid) ?? 0);
    const accepted = results.reduce((sum, l) => sum + (l.statuses["200"] ?? 0), 0);
    const checks = {
      accepted,
      stored,
      processed,
      unprocessed: stored - processed,
      paymentsResolvedOnce: counts.filter((k) => k === 1).length,
      paymentsResolvedMoreThanOnce: counts.filter((k) => k > 1).length,
      paymentsNotResolved: counts.filter((k) => k === 0).length,
    };
    // With the workers off nothing is processed: only "every 200 was stored" can be checked.
    const countsOk = options.workers
      ? checks.stored === accepted && checks.unprocessed === 0 && checks.paymentsResolvedMoreThanOnce === 0 && checks.paymentsNotResolved === 0
      : checks.stored === accepted && checks.paymentsResolvedOnce + checks.paymentsResolvedMoreThanOnce === 0;
    if (!countsOk) problems.push(`webhook counts do not add up: ${JSON.stringify(checks)}`);
    const worstAnswer = Math.max(...results.map((l) => l.answerMs.p99));
    const worstResolve = options.workers ? Math.max(...results.map((l) => l.webhookToResolveMs?.p99 ?? Infinity)) : null;
    return {
      workers: options.workers,
      steadyPerSec: STEADY_PER_SEC,
      levels: results,
      checks,
      targets: {
        answerP99Ms: TARGET.answerP99Ms,
        webhookToResolveP99Ms: TARGET.webhookToResolveP99Ms,
        answerP99Met: worstAnswer < TARGET.answerP99Ms,
        resolveP99Met: worstResolve === null ? null : worstResolve < TARGET.webhookToResolveP99Ms,
        countsOk,
      },
      appMemory,
      setupSeconds,
      problems,
    };
  } finally {
    await db.$disconnect();
  }
}
