// Benchmark 2: the gateway webhook door. Signed webhooks for real orders of the shop (the
// sandbox's own CO notification bodies, freshly signed with the shop's Secret Key) are
// POSTed to /gateway/webhooks/<token> as a steady stream and in bursts: how many are answered
// per second, how fast the 200 comes (each stored durably first), and how long until the
// Shopify stand-in receives the resulting paymentSessionResolve. Afterwards every accepted
// webhook must be processed and every payment resolved exactly once.
import { openDatabase } from "../app/db/database.server";
import { startChild, type LoopStalls, type MemoryPeak } from "./lib/child-process";
import { describeCpu, perRequest, snapshot, spent, type CpuParts, type CpuPerRequest } from "./lib/cpu-meter";
import type { BareWebhookDoorConfig } from "./lib/bare-webhook-door";
import type { LoadResult } from "./lib/http-load";
import type { SignedWebhookLoad } from "./lib/load-process";
import { mapLimit, pollUntil } from "./lib/pool";
import type { ProcessStack } from "./lib/process-stack";
import { round, summarize, type LatencySummary } from "./lib/stats";
import type { OperationRecord } from "../dev/shopify-standin/store";

type Database = ReturnType<typeof openDatabase>;

/** The stages of the resolve of each of these orders' webhooks, from the app's rows. */
async function resolveStages(db: Database, orderIds: string[]): Promise<NonNullable<WebhookLevel["stagesMs"]>> {
  const [hooks, payments] = await Promise.all([
    db.gatewayWebhook.findMany({ where: { orderId: { in: orderIds } }, select: { orderId: true, receivedAt: true } }),
    db.payment.findMany({ where: { gatewayOrderId: { in: orderIds } }, select: { id: true, gatewayOrderId: true } }),
  ]);
  const messages = await db.outboxMessage.findMany({
    where: { paymentId: { in: payments.map((p) => p.id) }, kind: "payment.resolve" },
    select: { paymentId: true, createdAt: true, doneAt: true },
  });
  const received = new Map(hooks.map((h) => [h.orderId, h.receivedAt.getTime()]));
  const orderOf = new Map(payments.map((p) => [p.id, p.gatewayOrderId]));
  const settled: number[] = [];
  const delivered: number[] = [];
  for (const message of messages) {
    const at = received.get(orderOf.get(message.paymentId!) ?? null);
    if (at !== undefined) settled.push(message.createdAt.getTime() - at);
    if (message.doneAt) delivered.push(message.doneAt.getTime() - message.createdAt.getTime());
  }
  return { storedToSettled: summarize(settled), settledToDelivered: summarize(delivered) };
}

export interface WebhookLevel {
  /** 0 = steady: Poisson arrivals at STEADY_PER_SEC, each on its own connection. */
  concurrency: number;
  webhooks: number;
  answeredPerSec: number;
  statuses: Record<string, number>;
  answerMs: LatencySummary;
  /** The same answers from the app's side: request received to answer written (no network, no client). */
  answerInAppMs: LatencySummary;
  /** From sending the webhook to the stand-in receiving paymentSessionResolve (null with the workers off). */
  webhookToResolveMs: LatencySummary | null;
  /** Webhooks whose resolve never arrived within the wait. */
  missingResolves: number;
  /** Payments resolved per second, first send to last resolve (null with the workers off). */
  settledPerSec: number | null;
  /**
   * Where the time to resolve went, from the app's own rows: webhook stored (received) to its
   * payment settled (the resolve queued in the outbox), and queued to delivered to Shopify
   * (null with the workers off).
   */
  stagesMs: { storedToSettled: LatencySummary; settledToDelivered: LatencySummary } | null;
  meetsTarget: { answerP99: boolean; resolveP99: boolean | null };
  /** The app process's event-loop delay and GC pauses during the level. */
  appLoop: LoopStalls;
  /** The three slowest answers: ms, and when they were sent (s after the level's first send). */
  slowest: { ms: number; atSecond: number }[];
  /** The same load on the bare door (bare-webhook-door.ts: signature check and one durable insert), just before. */
  bareDoor: { answeredPerSec: number; statuses: Record<string, number>; answerMs: LatencySummary };
  /** The app's answer times over the bare door's. */
  ratio: { p50: number; p99: number };
  /**
   * CPU per webhook by part: for the app from the first send to the last resolve received
   * ("server" is the app, "runner" the process playing Shopify), for the bare door over its
   * answers ("server" is the door); null where /proc cannot be read.
   */
  cpu: { app: CpuPerRequest; bareDoor: CpuPerRequest } | null;
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
 * Signed webhooks of orders of their own sent to each side before the levels, and left out of
 * their figures: the first ones on each path pay for what is still cold (the shop's lookup by
 * its token, the first statements, the inbox's and outbox's first passes, the stand-in's first
 * check of a mutation), which would otherwise set a p99 of the first level.
 */
const WARM_WEBHOOKS = 20;

export async function benchWebhookIntake(stack: ProcessStack, options: { quick: boolean; workers: boolean; databaseUrl: string; postgres: boolean; log(line: string): void }): Promise<WebhookIntakeResult> {
  // c = 0: the steady level, an open stream (runOpenStream); then bursts from c clients at once.
  // The load comes from its own process (load-process.ts), never from this busy one.
  // Enough webhooks at each level that its p99 is not one or two of them (300: the 3rd slowest).
  const levels = options.quick ? [{ c: 0, n: 30 }, { c: 10, n: 30 }, { c: 50, n: 60 }] : [{ c: 0, n: 300 }, { c: 10, n: 300 }, { c: 50, n: 500 }];
  const total = WARM_WEBHOOKS + levels.reduce((sum, l) => sum + l.n, 0);
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
  let warmAccepted = 0;
  const db = openDatabase(options.databaseUrl);
  try {
    const generator = await startChild<{ pid: number }>("./load-process.ts", {});
    const bareDoor = await startChild<{ url: string }>("./bare-webhook-door.ts", { databaseUrl: options.databaseUrl, secretKeyHex: shop.secretKeyHex } satisfies BareWebhookDoorConfig);
    // The connections first: an unknown endpoint, which the webhook route answers 404 before any
    // database work (the bare door: 401, unsigned).
    await generator.call("warm", { origin: stack.app.info.url, path: "/gateway/webhooks/warm-up", count: 200 });
    await generator.call("warm", { origin: bareDoor.info.url, path: "/", count: 200 });
    // Then the real path, on both sides: signed webhooks of orders of their own, settled and
    // resolved before the levels begin.
    const warm = prepared.slice(0, WARM_WEBHOOKS);
    const warmLoad: SignedWebhookLoad = {
      origin: stack.app.info.url,
      path: `/gateway/webhooks/${shop.webhookToken}`,
      secretKeyHex: shop.secretKeyHex,
      bodies: warm.map((order) => order.body),
      shape: { kind: "closed", concurrency: 2, timeLimitMs: 60_000 },
    };
    const bareWarm = await generator.call<LoadResult>("webhooks", { ...warmLoad, origin: bareDoor.info.url, path: "/" }, 120_000);
    const appWarm = await generator.call<LoadResult>("webhooks", warmLoad, 120_000);
    for (const [side, result] of [["bare door", bareWarm], ["app", appWarm]] as const) {
      if ((result.statuses["200"] ?? 0) !== WARM_WEBHOOKS) problems.push(`warm-up: the ${side} answered ${JSON.stringify(result.statuses)}`);
    }
    warmAccepted = appWarm.statuses["200"] ?? 0;
    if (options.workers) await pollUntil(() => (warm.every((order) => stack.standin.state.session(order.gid)?.state.code === "RESOLVED") ? true : null), 60_000, 25);
    const cpuParts = (server: number): CpuParts => ({
      pids: { server, sandbox: stack.sandbox.pid, "load generator": generator.pid, runner: process.pid },
      postgres: options.postgres,
    });
    try {
      let offset = WARM_WEBHOOKS;
      for (const { c, n } of levels) {
        const batch = prepared.slice(offset, offset + n);
        offset += n;
        const load: SignedWebhookLoad = {
          origin: stack.app.info.url,
          path: `/gateway/webhooks/${shop.webhookToken}`,
          secretKeyHex: shop.secretKeyHex,
          bodies: batch.map((order) => order.body),
          shape: c > 0 ? { kind: "closed", concurrency: c, timeLimitMs: 120_000 } : { kind: "stream", perSec: STEADY_PER_SEC, seed: 20261123 },
        };
        // The floor first, with the same bodies, arrivals and signing, while the app is idle.
        const bareBefore = snapshot(cpuParts(bareDoor.pid));
        const bare = await generator.call<LoadResult>("webhooks", { ...load, origin: bareDoor.info.url, path: "/" }, 180_000);
        const bareAfter = snapshot(cpuParts(bareDoor.pid));
        if ((bare.statuses["200"] ?? 0) !== n) problems.push(`concurrency ${c}: the bare door answered ${JSON.stringify(bare.statuses)}`);
        await stack.app.call("loop.reset");
        await stack.app.call("requests.reset");
        const appBefore = snapshot(cpuParts(stack.app.pid));
        const run = await generator.call<LoadResult>("webhooks", load, 180_000);
        const appLoop = await stack.app.call<LoopStalls>("loop.stalls");
        const answerInAppMs = await stack.app.call<LatencySummary>("requests.inApp");
        const accepted = run.sent.filter((s) => s.status === 200);
        if (accepted.length !== n) problems.push(`concurrency ${c}: ${n - accepted.length} webhooks not answered 200 (${JSON.stringify(run.statuses)})`);
        const wanted = new Set(accepted.map((s) => batch[s.index]!.gid));
        if (options.workers) await pollUntil(() => ([...wanted].every((gid) => stack.standin.state.session(gid)?.state.code === "RESOLVED") ? true : null), 60_000, 25);
        const appAfter = snapshot(cpuParts(stack.app.pid));
        const resolveAt = new Map<string, number>();
        for (const op of stack.standin.state.operations()) {
          if (!resolvedByShopify(op)) continue;
          for (const gid of op.sessionIds) if (wanted.has(gid) && !resolveAt.has(gid)) resolveAt.set(gid, Date.parse(op.at));
        }
        const toResolve = accepted.flatMap((s) => {
          const at = resolveAt.get(batch[s.index]!.gid);
          return at === undefined ? [] : [at - s.sentAt];
        });
        const firstSent = Math.min(...run.sent.map((s) => s.sentAt));
        const lastResolve = Math.max(...resolveAt.values());
        const answerMs = summarize(run.sent.map((s) => s.latencyMs));
        const stagesMs = options.workers ? await resolveStages(db, batch.map((order) => order.orderId)) : null;
        const bareAnswerMs = summarize(bare.sent.map((s) => s.latencyMs));
        const level: WebhookLevel = {
          concurrency: c,
          webhooks: n,
          answeredPerSec: round(run.throughput, 1),
          statuses: run.statuses,
          answerMs,
          answerInAppMs,
          webhookToResolveMs: options.workers ? summarize(toResolve) : null,
          missingResolves: options.workers ? accepted.length - toResolve.length : 0,
          settledPerSec: options.workers ? round((resolveAt.size / Math.max(1, lastResolve - firstSent)) * 1000, 1) : null,
          stagesMs,
          meetsTarget: { answerP99: false, resolveP99: null },
          appLoop,
          slowest: [...run.sent]
            .sort((a, b) => b.latencyMs - a.latencyMs)
            .slice(0, 3)
            .map((s) => ({ ms: round(s.latencyMs), atSecond: round((s.sentAt - firstSent) / 1000, 1) })),
          bareDoor: { answeredPerSec: round(bare.throughput, 1), statuses: bare.statuses, answerMs: bareAnswerMs },
          ratio: { p50: round(answerMs.p50 / bareAnswerMs.p50), p99: round(answerMs.p99 / bareAnswerMs.p99) },
          cpu: appBefore && appAfter && bareBefore && bareAfter ? { app: perRequest(spent(appBefore, appAfter), n), bareDoor: perRequest(spent(bareBefore, bareAfter), n) } : null,
        };
        level.meetsTarget = {
          answerP99: level.answerMs.p99 < TARGET.answerP99Ms,
          // A webhook never turned into a resolve (in the 60 s waited) is not in the p99: it misses the target.
          resolveP99: level.webhookToResolveMs ? level.missingResolves === 0 && level.webhookToResolveMs.p99 < TARGET.webhookToResolveP99Ms : null,
        };
        results.push(level);
        options.log(
          `  webhooks ${c === 0 ? `steady ${STEADY_PER_SEC}/s` : `c=${c}`}: ${level.answeredPerSec}/s answered, answer p50 ${level.answerMs.p50} ms p99 ${level.answerMs.p99} ms (in the app ${answerInAppMs.p50} / ${answerInAppMs.p99} ms; bare door ${level.bareDoor.answeredPerSec}/s, p50 ${bareAnswerMs.p50} ms p99 ${bareAnswerMs.p99} ms; x${level.ratio.p50} / x${level.ratio.p99})${level.webhookToResolveMs ? `; to resolve p50 ${level.webhookToResolveMs.p50} ms p99 ${level.webhookToResolveMs.p99} ms; ${level.settledPerSec} settled/s` : ""}${level.missingResolves ? `; ${level.missingResolves} never resolved` : ""}` +
            (stagesMs ? `\n    stored to settled p50 ${stagesMs.storedToSettled.p50} ms p99 ${stagesMs.storedToSettled.p99} ms; settled to delivered to Shopify p50 ${stagesMs.settledToDelivered.p50} ms p99 ${stagesMs.settledToDelivered.p99} ms` : "") +
            (level.cpu ? `\n    CPU per webhook: app ${describeCpu(level.cpu.app)} | bare door ${describeCpu(level.cpu.bareDoor)}` : "") +
            `\n    app event loop delay p99 ${appLoop.delayMs.p99} ms, max ${appLoop.delayMs.max} ms; GC ${appLoop.gc.count} pauses, longest ${appLoop.gc.maxMs} ms (${appLoop.gc.longest ?? "?"}); slowest answers ${level.slowest.map((s) => `${s.ms} ms at ${s.atSecond} s`).join(", ")}`,
        );
      }
    } finally {
      await generator.close();
      await bareDoor.close();
    }
    const appMemory = await stack.app.call<MemoryPeak>("memory.peak");

    // Let the inbox and outbox finish whatever is left, then count.
    if (options.workers) await pollUntil(async () => ((await db.gatewayWebhook.count({ where: { processedAt: null } })) === 0 ? true : null), 30_000, 100);
    const stored = await db.gatewayWebhook.count({ where: { shopId: shop.shopId } });
    const processed = await db.gatewayWebhook.count({ where: { shopId: shop.shopId, processedAt: { not: null } } });
    const resolvesByGid = new Map<string, number>();
    for (const op of stack.standin.state.operations()) {
      if (!resolvedByShopify(op)) continue;
      for (const gid of op.sessionIds) resolvesByGid.set(gid, (resolvesByGid.get(gid) ?? 0) + 1);
    }
    const counts = prepared.map((p) => resolvesByGid.get(p.gid) ?? 0);
    // The warm-up's webhooks are counted too: every one answered 200 must be processed once.
    const accepted = warmAccepted + results.reduce((sum, l) => sum + (l.statuses["200"] ?? 0), 0);
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

/**
 * A resolve Shopify carried out: answered 200 with neither top-level errors nor userErrors (the
 * stand-in answers a refused resolve 200 with userErrors, as Shopify does).
 */
function resolvedByShopify(op: OperationRecord): boolean {
  if (op.operationName !== "PaymentSessionResolve" || op.status !== 200) return false;
  const answer = op.answer as { errors?: unknown[]; data?: { paymentSessionResolve?: { userErrors?: unknown[] } | null } } | null;
  if (!answer || (answer.errors?.length ?? 0) > 0) return false;
  const payload = answer.data?.paymentSessionResolve;
  return payload !== undefined && payload !== null && (payload.userErrors?.length ?? 0) === 0;
}
