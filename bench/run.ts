// `npm run bench`: runs the benchmarks on SQLite and on PostgreSQL (skipped with a
// message when 127.0.0.1:5432 does not answer), prints a summary and writes the raw
// figures to bench/results/<timestamp>.json. BENCHMARKS.md explains each figure.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { benchSessionOverhead } from "./session-overhead";
import { benchWebhookIntake } from "./webhook-intake";
import { freshDatabase, postgresProblem, type DbKind } from "./lib/databases";
import { parseOptions } from "./lib/options";
import { startChild, type MemoryPeak } from "./lib/child-process";
import type { QuotaDayConfig } from "./lib/quota-day-process";
import { startProcessStack } from "./lib/process-stack";

const log = (line: string) => console.log(line);
const SERVINGS = ["prebuilt", "vite"] as const;

async function runOnDatabase(kind: DbKind, only: readonly string[], quick: boolean): Promise<Record<string, unknown>> {
  const figures: Record<string, unknown> = {};
  const dir = mkdtempSync(join(tmpdir(), `cryptopay-bench-${kind}-`));
  try {
    if (only.includes("sessions") || only.includes("webhooks")) {
      for (const serving of SERVINGS) {
        const db = await freshDatabase(kind, dir, `app-${serving}`);
        const started = performance.now();
        const stack = await startProcessStack({ databaseUrl: db.url, dir, serving });
        log(`  app served ${serving === "vite" ? "by Vite dev mode" : "prebuilt (production request path)"}: up in ${Math.round(performance.now() - started)} ms`);
        const figuresOfServing: Record<string, unknown> = {};
        figures[serving] = figuresOfServing;
        try {
          if (only.includes("sessions")) figuresOfServing.sessions = await benchSessionOverhead(stack, { quick, log });
          if (only.includes("webhooks")) figuresOfServing.webhooks = await benchWebhookIntake(stack, { quick, log, databaseUrl: db.url });
        } finally {
          await stack.close();
          await db.drop();
        }
      }
    }
    if (only.includes("quota")) {
      const db = await freshDatabase(kind, dir, "quota");
      const child = await startChild<{ pid: number }>("./quota-day-process.ts", { databaseUrl: db.url, dir, quick } satisfies QuotaDayConfig);
      try {
        await child.call("memory.reset");
        const result = await child.call<Record<string, unknown>>("run");
        figures.quota = { ...result, processMemory: await child.call<MemoryPeak>("memory.peak") };
      } finally {
        await child.close();
        await db.drop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const startedAt = new Date();
  const machine = { nproc: cpus().length, cpu: cpus()[0]?.model ?? "unknown", memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, platform: process.platform };
  log(`bench: ${options.only.join(", ")} on ${options.dbs.join(", ")}${options.quick ? " (quick)" : ""}; ${machine.nproc} cores, Node ${machine.node}`);
  const results: Record<string, unknown> = {};
  const skipped: Record<string, string> = {};
  for (const kind of options.dbs) {
    if (kind === "postgresql") {
      const problem = await postgresProblem();
      if (problem) {
        skipped[kind] = `PostgreSQL at 127.0.0.1:5432 is not reachable (${problem}); its run was skipped.`;
        log(`bench: ${skipped[kind]}`);
        continue;
      }
    }
    log(`bench: ${kind}`);
    const t0 = performance.now();
    results[kind] = await runOnDatabase(kind, options.only, options.quick);
    log(`bench: ${kind} done in ${Math.round((performance.now() - t0) / 1000)} s`);
  }
  const outDir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `${startedAt.toISOString().replace(/[:.]/g, "-")}.json`);
  const durationSeconds = Math.round((Date.now() - startedAt.getTime()) / 1000);
  writeFileSync(file, JSON.stringify({ startedAt: startedAt.toISOString(), durationSeconds, options, machine, skipped, results }, null, 2) + "\n");
  log(`bench: done in ${durationSeconds} s; raw results in ${file}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
