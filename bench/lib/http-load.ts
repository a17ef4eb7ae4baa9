// Load generators over node:http. Closed loop: `concurrency` clients, each sending its next
// request as soon as the previous answer is read, over keep-alive connections, bounded by a
// request count and a time limit. Open stream: arrivals on their own schedule.
import http from "node:http";
import { performance } from "node:perf_hooks";
import { seededRandom } from "./stats";

export interface LoadRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface Sent {
  index: number;
  /** Wall-clock ms when the request was sent (to match against other processes' timestamps). */
  sentAt: number;
  latencyMs: number;
  status: number;
  body: string;
}

export interface LoadResult {
  sent: Sent[];
  elapsedMs: number;
  /** Answered requests per second over the whole run. */
  throughput: number;
  statuses: Record<string, number>;
  stoppedByTime: boolean;
}

export async function runClosedLoop(options: {
  origin: string;
  concurrency: number;
  requests: readonly LoadRequest[] | ((index: number) => LoadRequest);
  count: number;
  timeLimitMs: number;
  requestTimeoutMs?: number;
}): Promise<LoadResult> {
  const url = new URL(options.origin);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const make = typeof options.requests === "function" ? options.requests : (i: number) => (options.requests as readonly LoadRequest[])[i]!;
  const sent: Sent[] = [];
  const statuses: Record<string, number> = {};
  const started = performance.now();
  const deadline = started + options.timeLimitMs;
  let next = 0;
  let stoppedByTime = false;

  const one = (request: LoadRequest) =>
    new Promise<{ status: number; body: string }>((resolve) => {
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          method: "POST",
          path: request.path,
          agent,
          headers: { ...request.headers, "content-length": Buffer.byteLength(request.body) },
          timeout: options.requestTimeoutMs ?? 30_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
          res.on("error", () => resolve({ status: 0, body: "response error" }));
        },
      );
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", (error) => resolve({ status: 0, body: String(error) }));
      req.end(request.body);
    });

  async function client(): Promise<void> {
    for (;;) {
      if (performance.now() > deadline) {
        stoppedByTime = true;
        return;
      }
      const index = next++;
      if (index >= options.count) return;
      const request = make(index);
      const sentAt = Date.now();
      const t0 = performance.now();
      const answer = await one(request);
      const latencyMs = performance.now() - t0;
      sent.push({ index, sentAt, latencyMs, status: answer.status, body: answer.body });
      statuses[String(answer.status)] = (statuses[String(answer.status)] ?? 0) + 1;
    }
  }

  await Promise.all(Array.from({ length: options.concurrency }, () => client()));
  const elapsedMs = performance.now() - started;
  agent.destroy();
  return { sent, elapsedMs, throughput: (sent.length / elapsedMs) * 1000, statuses, stoppedByTime };
}

/**
 * An open-loop stream: requests arrive on their own schedule (a Poisson process at `perSec` on
 * average, from a fixed seed), each on a new connection, whether or not earlier ones were answered.
 */
export async function runOpenStream(options: {
  origin: string;
  perSec: number;
  seed: number;
  count: number;
  requests: (index: number) => LoadRequest;
}): Promise<LoadResult> {
  const random = seededRandom(options.seed);
  const started = performance.now();
  let at = 0;
  const sends: Promise<LoadResult>[] = [];
  for (let i = 0; i < options.count; i++) {
    const wait = started + at - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const index = i;
    sends.push(
      runClosedLoop({ origin: options.origin, concurrency: 1, count: 1, timeLimitMs: 30_000, requests: () => options.requests(index) }).then((one) => ({
        ...one,
        sent: one.sent.map((s) => ({ ...s, index })),
      })),
    );
    at += (-Math.log(1 - random()) / options.perSec) * 1000;
  }
  const sent = (await Promise.all(sends)).flatMap((r) => r.sent);
  const elapsedMs = performance.now() - started;
  const statuses: Record<string, number> = {};
  for (const s of sent) statuses[String(s.status)] = (statuses[String(s.status)] ?? 0) + 1;
  return { sent, elapsedMs, throughput: (sent.length / elapsedMs) * 1000, statuses, stoppedByTime: false };
}
