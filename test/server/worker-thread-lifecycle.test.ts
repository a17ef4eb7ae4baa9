// The workers' own thread (WORKER_THREAD=true, PostgreSQL): a thread that dies is noticed and
// started again, and stopping the workers ends promptly whether the thread is running or has
// just died and is waiting to be started again.
import type { Worker as NodeWorker } from "node:worker_threads";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { parseEnv } from "../../app/config/env.server";
import { applyMigrations } from "../../app/db/migrate.server";
import { createLogger } from "../../app/lib/logger.server";
import { createServices, type AppServices } from "../../app/services.server";
import { startWorkerThread } from "../../server/workers-thread";
import { createTestPostgresDatabase } from "../support/postgres";
import { waitFor } from "../support/stack";

// Every thread the workers start, so a test can end one as a crash would.
const threads = vi.hoisted(() => [] as NodeWorker[]);
vi.mock("node:worker_threads", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:worker_threads")>();
  class TrackedWorker extends actual.Worker {
    constructor(...args: ConstructorParameters<typeof actual.Worker>) {
      super(...args);
      threads.push(this);
    }
  }
  return { ...actual, Worker: TrackedWorker, default: { ...actual, Worker: TrackedWorker } };
});

let database: Awaited<ReturnType<typeof createTestPostgresDatabase>>;
let services: AppServices;
const lines: string[] = [];
const records = () => lines.map((line) => JSON.parse(line) as { msg: string; thread?: string; level: string });

beforeAll(async () => {
  database = await createTestPostgresDatabase();
  await applyMigrations(database.url);
  const values = {
    NODE_ENV: "test",
    LOG_LEVEL: "info",
    DATABASE_URL: database.url,
    WORKER_THREAD: "true",
    GATEWAY_BASE_URL: "http://127.0.0.1:9/api/v1",
    GATEWAY_SANDBOX_URL: "http://127.0.0.1:9/api/v1",
    OUTBOX_INTERVAL_MS: "200",
    RECONCILE_INTERVAL_MS: "3600000",
  };
  // The thread reads its configuration from its copy of process.env.
  Object.assign(process.env, values);
  services = createServices(parseEnv(values), { logger: createLogger({ level: "debug", sink: (line) => lines.push(line) }) });
}, 60_000);

afterAll(async () => {
  await services?.db.$disconnect();
  await database?.drop();
});

const workersStartedOnThread = () => records().filter((r) => r.msg === "Background workers started" && r.thread === "workers").length;

it("a thread that dies is started again, and a running thread stops without being terminated", async () => {
  const workers = startWorkerThread(services);
  await waitFor(async () => workersStartedOnThread() === 1, "the workers to start on their thread", 30_000);
  expect(threads).toHaveLength(1);

  await threads[0]!.terminate();
  await waitFor(async () => workersStartedOnThread() === 2, "the workers to start again on a new thread", 30_000);
  expect(threads).toHaveLength(2);
  expect(records().some((r) => r.level === "error" && r.msg === "Worker thread exited; starting it again")).toBe(true);

  await workers.stop();
  expect(records().some((r) => r.msg === "Worker thread did not stop in time; terminating it")).toBe(false);
}, 60_000);

it("stopping while a dead thread waits to be started again ends at once: nothing is left to finish, and no thread is started", async () => {
  const before = threads.length;
  const workers = startWorkerThread(services);
  await waitFor(async () => threads.length === before + 1 && workersStartedOnThread() >= 3, "the workers to start on their thread", 30_000);

  // The thread dies (an uncaught error in it): a pass asked of it now is refused at once, not left waiting.
  await threads[before]!.terminate();
  await expect(workers.runOnce()).rejects.toThrow(/not running/);
  // The process is asked to stop before the thread is started again.
  await workers.stop();
  expect(records().some((r) => r.msg === "Worker thread did not stop in time; terminating it")).toBe(false);
  // No thread is started after the stop (the restart was due RESTART_AFTER_MS after the death).
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  expect(threads).toHaveLength(before + 1);
}, 60_000);
