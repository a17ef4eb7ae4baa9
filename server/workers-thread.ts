// The background workers on their own thread (WORKER_THREAD=true, PostgreSQL), so settling
// payments and calling Shopify never hold up a request: the request thread only forwards
// wakes. A thread that dies is started again after a pause; stop() lets its pass finish.
import { Worker } from "node:worker_threads";
import { settledWithin } from "../app/lib/deadline";
import type { Logger, LogFields } from "../app/lib/logger.server";
import type { AppServices, WakeKind } from "../app/services.server";
import { RENEWALS_STOP_WAIT_MS, WORKERS_STOP_ALLOWANCE_MS, type Workers } from "../app/workers.server";

export type ToWorkerThread = { type: "wake"; loop: WakeKind } | { type: "run-once"; id: number } | { type: "stop" };
export type FromWorkerThread =
  | { type: "ran-once"; id: number; ok: true }
  | { type: "ran-once"; id: number; ok: false; error: string }
  | { type: "log"; line: string };

const LEVELS = ["debug", "info", "warn", "error"] as const;

/** A line the thread's logger wrote, written again through this thread's logger. */
function relayLog(logger: Logger, line: string): void {
  try {
    const { level, msg, time: _time, ...fields } = JSON.parse(line) as { level: string; msg: string; time?: string } & LogFields;
    const known = LEVELS.find((l) => l === level) ?? "info";
    logger[known](msg, { ...fields, thread: "workers" });
  } catch {
    logger.warn("Unreadable log line from the worker thread");
  }
}

const RESTART_AFTER_MS = 1_000;

/**
 * The thread loads TypeScript with tsx, as `npm start` does: this process's module loader flags
 * (--import/--require; process-wide flags such as --expose-gc are refused in a thread), plus
 * tsx's when this process has none (a test runner transforms modules without a loader).
 */
export function loaderFlags(execArgv: readonly string[]): string[] {
  const flags: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i]!;
    if (/^--(import|require|loader|experimental-loader)=/.test(arg)) flags.push(arg);
    else if (/^--(import|require|loader|experimental-loader)$/.test(arg) && i + 1 < execArgv.length) flags.push(arg, execArgv[++i]!);
  }
  return flags.some((flag) => flag.includes("tsx")) ? flags : [...flags, "--import", "tsx"];
}
/**
 * The thread is given the workers' own stop allowance and the wait for a token renewal under
 * way after it (RENEWALS_STOP_WAIT_MS), and half a second for the message's way and the
 * thread's database to close, then terminated: within server/main.ts's forced exit.
 */
const STOP_TIMEOUT_MS = WORKERS_STOP_ALLOWANCE_MS + RENEWALS_STOP_WAIT_MS + 500;

export function startWorkerThread(services: AppServices): Workers {
  let stopping = false;
  // False from a thread's exit until the next one is started (RESTART_AFTER_MS later).
  let alive = true;
  let restart: NodeJS.Timeout | null = null;
  let nextId = 1;
  const waiting = new Map<number, { resolve(): void; reject(error: Error): void }>();

  const spawn = (): Worker => {
    const started = new Worker(new URL("./worker-thread.ts", import.meta.url), { execArgv: loaderFlags(process.execArgv) });
    started.on("message", (message: FromWorkerThread) => {
      if (message.type === "log") return relayLog(services.logger, message.line);
      const waiter = waiting.get(message.id);
      if (!waiter) return;
      waiting.delete(message.id);
      if (message.ok) waiter.resolve();
      else waiter.reject(new Error(message.error));
    });
    started.on("error", (error) => services.logger.error("Worker thread failed", { error }));
    started.on("exit", (code) => {
      alive = false;
      for (const waiter of waiting.values()) waiter.reject(new Error(`worker thread exited (${code})`));
      waiting.clear();
      if (stopping) return;
      services.logger.error("Worker thread exited; starting it again", { code, afterMs: RESTART_AFTER_MS });
      restart = setTimeout(() => {
        restart = null;
        if (!stopping) thread = spawn();
      }, RESTART_AFTER_MS);
    });
    alive = true;
    return started;
  };
  let thread = spawn();
  // A wake while no thread runs is dropped: the next thread's loops start with a pass.
  const send = (message: ToWorkerThread) => {
    if (alive) thread.postMessage(message);
  };
  const unsubscribe = (["outbox", "inbox", "readiness"] as const).map((loop) => services.subscribe(loop, () => send({ type: "wake", loop })));
  services.logger.info("Background workers run on their own thread");

  return {
    async stop() {
      stopping = true;
      unsubscribe.forEach((off) => off());
      // A thread that died is not started again, and has nothing left to finish.
      if (restart) clearTimeout(restart);
      if (!alive) return;
      const exited = new Promise<void>((resolve) => thread.once("exit", () => resolve()));
      send({ type: "stop" });
      if (!(await settledWithin(exited, STOP_TIMEOUT_MS))) {
        services.logger.error("Worker thread did not stop in time; terminating it", { afterMs: STOP_TIMEOUT_MS });
        await thread.terminate();
      }
    },
    runOnce() {
      if (!alive) return Promise.reject(new Error("the worker thread is not running (it is started again shortly)"));
      const id = nextId++;
      return new Promise<void>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        send({ type: "run-once", id });
      });
    },
  };
}
