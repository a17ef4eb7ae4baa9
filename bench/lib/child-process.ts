// The benchmark's helper processes (app, gateway sandbox, bare proxy): started with fork
// (the same Node and TypeScript loader as the runner), configured and driven over IPC
// with request/answer messages, and each one samples its own resident memory.
import { fork, type ChildProcess } from "node:child_process";
import { constants, monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { round } from "./stats";

interface Request {
  id: number;
  command: string;
  args: unknown;
}
type Answer = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };
type Message = { type: "ready"; info: unknown } | { type: "failed"; error: string } | ({ type: "answer" } & Answer);

export interface MemoryPeak {
  /** Highest process.memoryUsage().rss seen by the 50 ms sampler since the last reset, in MiB. */
  peakRssMiB: number;
  /** rss when the process had just started (before any benchmark traffic), in MiB. */
  readyRssMiB: number;
  /** rss, V8 heap in use after a full garbage collection, and memory outside the heap (Buffers, WebAssembly, native) right now, in MiB. */
  rssMiB: number;
  heapUsedMiB: number;
  externalMiB: number;
  samples: number;
}

/** How long the child's event loop was held up since the last "loop.reset", and by garbage collection. */
export interface LoopStalls {
  /** Delay of the event loop's turns (sampled every 1 ms), in ms. */
  delayMs: { p50: number; p99: number; max: number };
  /** Garbage-collection pauses; `longest` says which kind of collection the longest was (minor, major, incremental, weakcb). */
  gc: { count: number; maxMs: number; totalMs: number; longest: string | null };
}

export interface ChildHandle<Info> {
  info: Info;
  pid: number;
  call<T>(command: string, args?: unknown, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

const START_TIMEOUT_MS = 120_000;
const CALL_TIMEOUT_MS = 300_000;

/**
 * Starts `entry` (a module next to this one, e.g. "app-process.ts") and waits for it to be ready.
 * `cpuProfileDir`: the child writes a V8 CPU profile there when it exits (node --cpu-prof).
 */
export async function startChild<Info>(entry: string, config: unknown, options: { cpuProfileDir?: string } = {}): Promise<ChildHandle<Info>> {
  const path = fileURLToPath(new URL(entry, import.meta.url));
  const profile = options.cpuProfileDir ? ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  // --expose-gc: memory figures can then tell retained heap from garbage not yet collected.
  const child: ChildProcess = fork(path, [], { stdio: ["ignore", "inherit", "inherit", "ipc"], serialization: "advanced", execArgv: [...process.execArgv, "--expose-gc", ...profile] });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void; timer: NodeJS.Timeout }>();
  let nextId = 1;
  let exited = false;

  const info = await new Promise<Info>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry} did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    child.on("message", (raw) => {
      const message = raw as Message;
      if (message.type === "ready") {
        clearTimeout(timer);
        resolve(message.info as Info);
      } else if (message.type === "failed") {
        clearTimeout(timer);
        reject(new Error(`${entry} failed to start: ${message.error}`));
      } else if (message.type === "answer") {
        const waiter = pending.get(message.id);
        if (!waiter) return;
        pending.delete(message.id);
        clearTimeout(waiter.timer);
        if (message.ok) waiter.resolve(message.value);
        else waiter.reject(new Error(`${entry}: ${message.error}`));
      }
    });
    child.once("exit", (code) => {
      exited = true;
      clearTimeout(timer);
      reject(new Error(`${entry} exited with code ${code}`));
      for (const waiter of pending.values()) waiter.reject(new Error(`${entry} exited with code ${code}`));
      pending.clear();
    });
    child.send({ type: "config", config });
  });

  return {
    info,
    pid: child.pid ?? -1,
    call<T>(command: string, args?: unknown, timeoutMs = CALL_TIMEOUT_MS): Promise<T> {
      if (exited) return Promise.reject(new Error(`${entry} is not running`));
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${entry}: ${command} took longer than ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
        child.send({ type: "request", id, command, args } satisfies Request & { type: string });
      });
    },
    async close() {
      if (exited) return;
      const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.send({ type: "request", id: 0, command: "close", args: null });
      const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      await gone;
      clearTimeout(killer);
    },
  };
}

export type Handlers = Record<string, (args: unknown) => Promise<unknown> | unknown>;

/**
 * The child's side: reads its configuration, runs `start`, reports ready, then answers
 * commands. "memory.reset" / "memory.peak" and "loop.reset" / "loop.stalls" are built in;
 * "close" runs `stop` and exits.
 */
export function serveParent<Config, Info>(start: (config: Config) => Promise<{ info: Info; handlers: Handlers; stop(): Promise<void> }>): void {
  let peak = process.memoryUsage().rss;
  let ready = peak;
  let samples = 0;
  const sampler = setInterval(() => {
    const rss = process.memoryUsage().rss;
    samples++;
    if (rss > peak) peak = rss;
  }, 50);
  sampler.unref();
  const mib = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
  const ms = (nanoseconds: number) => round(nanoseconds / 1_000_000);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  const gc = { count: 0, maxMs: 0, totalMs: 0, longest: null as string | null };
  const gcKinds: Record<number, string> = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
    [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weakcb",
  };
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.count++;
      gc.totalMs += entry.duration;
      if (entry.duration > gc.maxMs) {
        gc.maxMs = entry.duration;
        const kind = ((entry as { detail?: unknown }).detail as { kind?: number } | undefined)?.kind;
        gc.longest = kind === undefined ? null : (gcKinds[kind] ?? String(kind));
      }
    }
  });
  const send = (message: Message) => process.send?.(message);

  process.once("message", (raw) => {
    const { config } = raw as { config: Config };
    start(config).then(
      ({ info, handlers, stop }) => {
        const all: Handlers = {
          ...handlers,
          "memory.reset": () => {
            peak = process.memoryUsage().rss;
            samples = 0;
            return null;
          },
          "loop.reset": () => {
            loop.disable();
            loop.reset();
            loop.enable();
            gcObserver.disconnect();
            Object.assign(gc, { count: 0, maxMs: 0, totalMs: 0, longest: null });
            gcObserver.observe({ entryTypes: ["gc"] });
            return null;
          },
          "loop.stalls": (): LoopStalls => {
            return {
              delayMs: { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) },
              gc: { count: gc.count, maxMs: round(gc.maxMs), totalMs: round(gc.totalMs), longest: gc.longest },
            };
          },
          "memory.peak": (): MemoryPeak => {
            const rssBefore = process.memoryUsage().rss;
            if (rssBefore > peak) peak = rssBefore;
            (globalThis as { gc?: () => void }).gc?.();
            const now = process.memoryUsage();
            return { peakRssMiB: mib(Math.max(peak, now.rss)), readyRssMiB: mib(ready), rssMiB: mib(now.rss), heapUsedMiB: mib(now.heapUsed), externalMiB: mib(now.external), samples };
          },
        };
        process.on("message", (message) => {
          const request = message as Request;
          if (request.command === "close") {
            clearInterval(sampler);
            loop.disable();
            gcObserver.disconnect();
            stop().finally(() => process.exit(0));
            return;
          }
          const handler = all[request.command];
          Promise.resolve()
            .then(() => {
              if (!handler) throw new Error(`unknown command ${request.command}`);
              return handler(request.args);
            })
            .then(
              (value) => send({ type: "answer", id: request.id, ok: true, value }),
              (error: unknown) => send({ type: "answer", id: request.id, ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
            );
        });
        ready = process.memoryUsage().rss;
        send({ type: "ready", info });
      },
      (error: unknown) => {
        send({ type: "failed", error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
        setTimeout(() => process.exit(1), 100);
      },
    );
  });
}
