// Benchmark 1: what the app's payment session route costs on top of the one gateway call
// it must make. The same Shopify-shaped POSTs go to the app (/payments/session) and to a
// bare proxy that only forwards a POST /orders/ to the sandbox; latency and throughput
// are compared at several concurrency levels, in the same run.
import { randomUUID } from "node:crypto";
import type { BareProxyConfig } from "./lib/bare-proxy";
import { startChild, type MemoryPeak } from "./lib/child-process";
import { added, describeCpu, perRequest, snapshot, spent, type CpuPerRequest, type CpuSpent } from "./lib/cpu-meter";
import { runClosedLoop, type LoadRequest, type LoadResult } from "./lib/http-load";
import type { ProcessStack } from "./lib/process-stack";
import type { SessionProfile } from "./lib/session-profile";
import { round, summarize, type LatencySummary } from "./lib/stats";

export interface TargetFigures {
  latencyMs: LatencySummary;
  throughputPerSec: number;
  answered: number;
  statuses: Record<string, number>;
  stoppedByTime: boolean;
}

export interface SessionLevel {
  concurrency: number;
  app: TargetFigures;
  /** The app's answers from its own side: request received to answer written (no network, no client). */
  appInAppMs: LatencySummary;
  bareProxy: TargetFigures;
  addedMs: { p50: number; p99: number };
  ratio: { p50: number; p99: number; throughput: number };
  /** Added under 5 ms at p50 and 25 ms at p99, or at most 1.5x the bare proxy at both. */
  meetsTarget: boolean;
  /**
   * CPU per session answered, by part ("server" is the app or the bare proxy), over the rounds of
   * each side; null where /proc cannot be read.
   */
  cpu: { app: CpuPerRequest; bareProxy: CpuPerRequest } | null;
}

export interface SessionOverheadResult {
  levels: SessionLevel[];
  /** The use case called in-process after the load, with every query and gateway call timed. */
  profile: SessionProfile;
  appMemory: MemoryPeak;
  bareProxyMemory: MemoryPeak;
  appLogs: unknown;
  problems: string[];
}

const TARGET = { addedP50Ms: 5, addedP99Ms: 25, ratio: 1.5 };

function figures(result: LoadResult): TargetFigures {
  return {
    latencyMs: summarize(result.sent.map((s) => s.latencyMs)),
    throughputPerSec: round(result.throughput, 1),
    answered: result.sent.length,
    statuses: result.statuses,
    stoppedByTime: result.stoppedByTime,
  };
}

/** Several rounds against one target as if they were one run: throughput over their summed time. */
function merge(runs: LoadResult[]): LoadResult {
  const sent = runs.flatMap((r) => r.sent);
  const elapsedMs = runs.reduce((sum, r) => sum + r.elapsedMs, 0);
  const statuses: Record<string, number> = {};
  for (const r of runs) for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  return { sent, elapsedMs, throughput: (sent.length / elapsedMs) * 1000, statuses, stoppedByTime: runs.some((r) => r.stoppedByTime) };
}

export async function benchSessionOverhead(stack: ProcessStack, options: { quick: boolean; postgres: boolean; log(line: string): void }): Promise<SessionOverheadResult> {
  // Enough sessions on each side at each level that its p99 is not one or two of them (600: the 6th slowest).
  const levels = options.quick ? [{ c: 1, n: 30 }, { c: 10, n: 80 }, { c: 50, n: 150 }] : [{ c: 1, n: 600 }, { c: 10, n: 600 }, { c: 50, n: 1000 }];
  const proxy = await startChild<{ url: string }>("./bare-proxy.ts", { sandboxBaseUrl: stack.sandbox.info.baseUrl, deviceKey: stack.shop.deviceKey } satisfies BareProxyConfig);
  const problems: string[] = [];
  try {
    // Real Shopify-shaped bodies from the stand-in's checkout, each with a unique id.
    const request = (): LoadRequest => ({
      path: "/payments/session",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        "shopify-shop-domain": stack.shop.domain,
        "shopify-request-id": randomUUID(),
        "shopify-api-version": "2026-04",
      },
      body: JSON.stringify(stack.standin.state.createPaymentSession({ test: true }).request),
    });
    const load = (origin: string, concurrency: number, count: number) =>
      runClosedLoop({ origin, concurrency, count, requests: Array.from({ length: count }, request), timeLimitMs: options.quick ? 60_000 : 120_000 });

    // Warm-up: Vite compiles the route on first use, connections and caches fill.
    for (const origin of [proxy.info.url, stack.app.info.url]) {
      const warm = await load(origin, 5, 40);
      if ((warm.statuses["200"] ?? 0) !== 40) problems.push(`warm-up at ${origin === proxy.info.url ? "bare proxy" : "app"} answered ${JSON.stringify(warm.statuses)}: ${warm.sent.find((s) => s.status !== 200)?.body.slice(0, 200)}`);
    }

    await stack.app.call("memory.reset");
    await proxy.call("memory.reset");
    const results: SessionLevel[] = [];
    for (const { c, n } of levels) {
      // Rounds in A-B-B-A order, so that drift in the machine's load hits both sides alike.
      const rounds: ("bare" | "app")[] = ["bare", "app", "app", "bare"];
      const runs: Record<"bare" | "app", LoadResult[]> = { bare: [], app: [] };
      const cpuSpent: Record<"bare" | "app", CpuSpent[]> = { bare: [], app: [] };
      await stack.app.call("requests.reset");
      for (const side of rounds) {
        const parts = { pids: { server: side === "bare" ? proxy.pid : stack.app.pid, sandbox: stack.sandbox.pid, "load generator": process.pid }, postgres: options.postgres };
        const before = snapshot(parts);
        runs[side].push(await load(side === "bare" ? proxy.info.url : stack.app.info.url, c, Math.ceil(n / 2)));
        const after = snapshot(parts);
        if (before && after) cpuSpent[side].push(spent(before, after));
      }
      const bare = figures(merge(runs.bare));
      const appRun = merge(runs.app);
      const app = figures(appRun);
      const appInAppMs = await stack.app.call<LatencySummary>("requests.inApp");
      const refused = appRun.sent.filter((s) => s.status !== 200 || !s.body.includes("redirect_url"));
      if (refused.length) problems.push(`${refused.length} app answers at concurrency ${c} were not 200 {redirect_url}, e.g. ${refused[0]!.status} ${refused[0]!.body.slice(0, 200)}`);
      const addedMs = { p50: round(app.latencyMs.p50 - bare.latencyMs.p50), p99: round(app.latencyMs.p99 - bare.latencyMs.p99) };
      const ratio = {
        p50: round(app.latencyMs.p50 / bare.latencyMs.p50),
        p99: round(app.latencyMs.p99 / bare.latencyMs.p99),
        throughput: round(app.throughputPerSec / bare.throughputPerSec),
      };
      const meetsTarget = (addedMs.p50 < TARGET.addedP50Ms && addedMs.p99 < TARGET.addedP99Ms) || (ratio.p50 <= TARGET.ratio && ratio.p99 <= TARGET.ratio);
      const appCpu = added(cpuSpent.app);
      const bareCpu = added(cpuSpent.bare);
      const cpu = appCpu && bareCpu ? { app: perRequest(appCpu, app.answered), bareProxy: perRequest(bareCpu, bare.answered) } : null;
      results.push({ concurrency: c, app, appInAppMs, bareProxy: bare, addedMs, ratio, meetsTarget, cpu });
      options.log(
        `  sessions c=${c}: app p50 ${app.latencyMs.p50} ms p99 ${app.latencyMs.p99} ms ${app.throughputPerSec}/s (in the app ${appInAppMs.p50} / ${appInAppMs.p99} ms) | bare p50 ${bare.latencyMs.p50} ms p99 ${bare.latencyMs.p99} ms ${bare.throughputPerSec}/s | +${addedMs.p50}/+${addedMs.p99} ms, x${ratio.p50}/x${ratio.p99}`,
      );
      if (cpu) options.log(`    CPU per session: app ${describeCpu(cpu.app)} | bare ${describeCpu(cpu.bareProxy)}`);
    }
    const appMemory = await stack.app.call<MemoryPeak>("memory.peak");
    const profile = await stack.app.call<SessionProfile>("profile.sessions", {
      shopDomain: stack.shop.domain,
      bodies: Array.from({ length: options.quick ? 30 : 105 }, () => JSON.stringify(stack.standin.state.createPaymentSession({ test: true }).request)),
    });
    options.log(
      `  sessions in-process: p50 ${profile.inProcessMs.p50} ms; per session ${profile.perSession.dbQueries} queries ${profile.perSession.dbMs} ms, gateway HTTP ${profile.perSession.gatewayHttpMs} ms, other ${profile.perSession.otherMs} ms; ` +
        `a durable single-row write p50 ${profile.durableWrite.backToBackMs.p50} ms back to back, ${profile.durableWrite.afterPauseMs.p50} ms after ${profile.durableWrite.pauseMs} ms of quiet, so the session's 2 writes in turn cost at least ${profile.durableWrite.floorMs} ms`,
    );
    return {
      levels: results,
      profile,
      appMemory,
      bareProxyMemory: await proxy.call<MemoryPeak>("memory.peak"),
      appLogs: await stack.app.call("logs"),
      problems,
    };
  } finally {
    await proxy.close();
  }
}
