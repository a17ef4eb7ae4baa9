// `npm run bench`: runs the benchmarks on SQLite and on PostgreSQL (skipped with a
// message when 127.0.0.1:5432 does not answer), prints a summary and writes the raw
// figures to bench/results/<timestamp>.json. BENCHMARKS.md explains each figure.
//
// The latency benchmarks (sessions, webhooks) run one database after the other on an
// otherwise quiet machine. The simulated day (quota) counts gateway calls in simulated
// time, which CPU contention cannot change: its shops are split between the databases
// (a shop's calls depend on its own orders only) and the parts run side by side.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { benchSessionOverhead, type SessionOverheadResult } from "./session-overhead";
import { benchWebhookIntake, type WebhookIntakeResult } from "./webhook-intake";
import type { QuotaDayPart } from "./quota-day";
import { startChild, type MemoryPeak } from "./lib/child-process";
import { freshDatabase, postgresProblem, type DbKind } from "./lib/databases";
import { parseOptions, USAGE, type BenchOptions } from "./lib/options";
import type { QuotaDayConfig } from "./lib/quota-day-process";
import { buildForProduction } from "./lib/prebuilt-server";
import { startProcessStack } from "./lib/process-stack";
import { summarizeQuotaDay, type QuotaDaySummary } from "./lib/quota-day-summary";
import { printSummary } from "./lib/summary";

export type Serving = "prebuilt" | "vite";
export interface DbResults {
  prebuilt?: { sessions?: SessionOverheadResult; webhooks?: WebhookIntakeResult };
  vite?: { sessions?: SessionOverheadResult };
  /** This database's part of the simulated day: its process's memory. */
  dayProcessMemory?: MemoryPeak & { maxRssMiB: number };
  seconds: Record<string, number>;
}

const log = (line: string) => console.log(line);
const load = () => loadavg().map((v) => Math.round(v * 100) / 100);

/**
 * The app served prebuilt (production's request path) gets both latency benchmarks; Vite dev
 * mode (what `npm run dev` serves, always on SQLite) the session one, for comparison.
 */
const PLAN: { serving: Serving; benches: ("sessions" | "webhooks")[]; databases: DbKind[] }[] = [
  { serving: "prebuilt", benches: ["sessions", "webhooks"], databases: ["sqlite", "postgresql"] },
  { serving: "vite", benches: ["sessions"], databases: ["sqlite"] },
];

async function latencyBenchmarks(kind: DbKind, options: BenchOptions, into: DbResults): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `cryptopay-bench-${kind}-`));
  try {
    for (const { serving, benches, databases } of PLAN) {
      const selected = databases.includes(kind) ? benches.filter((b) => options.only.includes(b)) : [];
      if (selected.length === 0) continue;
      const db = await freshDatabase(kind, dir, `app-${serving}`);
      const t0 = performance.now();
      const workerThread = options.workerThread && kind === "postgresql";
      const cpuProfileDir = options.cpuProf ? fileURLToPath(new URL(`./results/cpu-profiles/${new Date().toISOString().replace(/[:.]/g, "-")}-${kind}-${serving}/`, import.meta.url)) : undefined;
      const stack = await startProcessStack({
        databaseUrl: db.url,
        dir,
        serving,
        workers: options.workers,
        ...(workerThread ? { env: { WORKER_THREAD: "true" } } : {}),
        ...(cpuProfileDir ? { cpuProfileDir } : {}),
      });
      if (cpuProfileDir) log(`  ${kind}: the app's CPU profile goes to ${cpuProfileDir} (open it in Chrome DevTools, Performance)`);
      log(`  ${kind}: app ${serving === "vite" ? "in Vite dev mode" : "prebuilt (production request path)"} up in ${Math.round(performance.now() - t0)} ms`);
      try {
        const figures: { sessions?: SessionOverheadResult; webhooks?: WebhookIntakeResult } = {};
        into[serving] = figures;
        if (selected.includes("sessions")) figures.sessions = await benchSessionOverhead(stack, { quick: options.quick, postgres: kind === "postgresql", log });
        if (selected.includes("webhooks")) figures.webhooks = await benchWebhookIntake(stack, { quick: options.quick, workers: options.workers, databaseUrl: db.url, postgres: kind === "postgresql", log });
      } finally {
        await stack.close();
        await db.drop();
      }
      into.seconds[serving] = Math.round((performance.now() - t0) / 1000);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One part of the simulated day (the shops with index % parts === part) on one database, in its own process. */
async function quotaDayPart(kind: DbKind, part: number, parts: number, options: BenchOptions, into: DbResults): Promise<QuotaDayPart> {
  const t0 = performance.now();
  const dir = mkdtempSync(join(tmpdir(), `cryptopay-bench-day-${kind}-`));
  const db = await freshDatabase(kind, dir, "day");
  try {
    const child = await startChild<{ pid: number }>("./quota-day-process.ts", { databaseUrl: db.url, quick: options.quick, part, parts, label: kind } satisfies QuotaDayConfig);
    try {
      await child.call("memory.reset");
      const result = await child.call<QuotaDayPart & { maxRssMiB: number }>("run", undefined, DAY_TIMEOUT_MS);
      into.dayProcessMemory = { ...(await child.call<MemoryPeak>("memory.peak")), maxRssMiB: result.maxRssMiB };
      return result;
    } finally {
      await child.close();
    }
  } finally {
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
    into.seconds.day = Math.round((performance.now() - t0) / 1000);
  }
}

/** The simulated day is bounded: a part that takes longer than this fails the run. */
const DAY_TIMEOUT_MS = 40 * 60_000;

async function main(): Promise<void> {
  if (process.argv.slice(2).some((arg) => arg === "--help" || arg === "-h")) {
    console.log(`usage: ${USAGE}\nEvery run builds the app first (npm run build, into build/); BENCHMARKS.md says what each part measures.`);
    return;
  }
  let options: BenchOptions;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    console.error((error as Error).message);
    process.exitCode = 2;
    return;
  }
  const startedAt = new Date();
  const machine = { nproc: cpus().length, cpu: cpus()[0]?.model ?? "unknown", memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, platform: process.platform };
  log(`bench: ${options.only.join(", ")} on ${options.dbs.join(", ")}${options.quick ? " (quick)" : ""}${options.workers ? "" : " (app workers off)"}${options.workerThread ? " (workers on their own thread on PostgreSQL)" : ""}; ${machine.nproc} cores, Node ${machine.node}, load ${load().join(" ")}`);
  const results: Partial<Record<DbKind, DbResults>> = {};
  const skipped: Partial<Record<DbKind, string>> = {};
  const loadAverages: Record<string, number[]> = { start: load() };
  for (const kind of options.dbs) {
    const problem = kind === "postgresql" ? await postgresProblem() : null;
    if (problem) {
      skipped[kind] = `PostgreSQL (127.0.0.1:5432, or PG_TEST_URL) is not reachable (${problem}); its run was skipped.`;
      log(`bench: ${skipped[kind]}`);
      continue;
    }
    results[kind] = { seconds: {} };
  }
  const kinds = Object.keys(results) as DbKind[];
  // Every part serves the app from the production build (the simulated day too).
  const t0 = performance.now();
  await buildForProduction();
  log(`bench: production build (npm run build) made in ${Math.round((performance.now() - t0) / 1000)} s`);
  if (options.only.includes("sessions") || options.only.includes("webhooks")) {
    for (const kind of kinds) await latencyBenchmarks(kind, options, results[kind]!);
    loadAverages.afterLatency = load();
  }
  let day: { summary: QuotaDaySummary } | undefined;
  if (options.only.includes("quota") && kinds.length > 0) {
    log(`bench: simulated day, shops split over ${kinds.join(" and ")}`);
    const parts = await Promise.all(kinds.map((kind, i) => quotaDayPart(kind, i, kinds.length, options, results[kind]!)));
    day = { summary: summarizeQuotaDay(parts) };
    loadAverages.afterQuota = load();
  }

  const outDir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `${startedAt.toISOString().replace(/[:.]/g, "-")}.json`);
  const durationSeconds = Math.round((Date.now() - startedAt.getTime()) / 1000);
  const report = { startedAt: startedAt.toISOString(), durationSeconds, options, machine, loadAverages, skipped, results, day: day?.summary };
  writeFileSync(file, JSON.stringify(report, null, 2) + "\n");
  printSummary(report, log);
  log(`bench: done in ${durationSeconds} s; raw results in ${file}`);
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
