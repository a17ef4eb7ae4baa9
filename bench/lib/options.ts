// The command line of `npm run bench`: which benchmarks, which databases, full or quick.
import { z } from "zod";
import type { DbKind } from "./databases";

export const BENCHMARKS = ["sessions", "webhooks", "quota"] as const;
export type BenchName = (typeof BENCHMARKS)[number];

export interface BenchOptions {
  only: BenchName[];
  dbs: DbKind[];
  quick: boolean;
  /** False (--no-workers): the app runs without its background workers, so the webhook door is measured alone. */
  workers: boolean;
  /** --worker-thread: on PostgreSQL the app runs its workers on their own thread (WORKER_THREAD=true). */
  workerThread: boolean;
  /** --cpu-prof: the app process of each latency benchmark writes a V8 CPU profile under bench/results/. */
  cpuProf: boolean;
}

const schema = z.object({
  only: z
    .string()
    .optional()
    .transform((v) => (v ? v.split(",").map((s) => s.trim()) : [...BENCHMARKS]))
    .pipe(z.array(z.enum(BENCHMARKS)).min(1)),
  db: z.enum(["sqlite", "postgresql"]).optional(),
  quick: z.boolean(),
  workers: z.boolean(),
  workerThread: z.boolean(),
  cpuProf: z.boolean(),
});

export const USAGE = `npm run bench [-- --only=${BENCHMARKS.join("|")}[,...]] [--db=sqlite|postgresql] [--quick] [--no-workers] [--worker-thread] [--cpu-prof]`;

export function parseOptions(argv: readonly string[]): BenchOptions {
  const raw: Record<string, string | boolean> = { quick: false, workers: true, workerThread: false, cpuProf: false };
  for (const arg of argv) {
    const match = /^--(only|db)=(.*)$/.exec(arg);
    if (match) raw[match[1]!] = match[2]!;
    else if (arg === "--quick") raw.quick = true;
    else if (arg === "--no-workers") raw.workers = false;
    else if (arg === "--worker-thread") raw.workerThread = true;
    else if (arg === "--cpu-prof") raw.cpuProf = true;
    else throw new Error(`unknown argument ${arg}\nusage: ${USAGE}`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new Error(`${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}\nusage: ${USAGE}`);
  return { only: parsed.data.only, dbs: parsed.data.db ? [parsed.data.db] : ["sqlite", "postgresql"], quick: parsed.data.quick, workers: parsed.data.workers, workerThread: parsed.data.workerThread, cpuProf: parsed.data.cpuProf };
}
