// The webhook benchmark's load generator in its own process (entry of a forked child), so
// the runner's work (the Shopify stand-in validating every operation against the schema,
// polling, garbage collection) never delays a send or the reading of an answer. Each
// webhook is signed here, at send time: the app refuses nonces older than 20 s.
import { signWebhook } from "../../app/gateway/webhook-signature";
import { serveParent } from "./child-process";
import { runClosedLoop, runOpenStream, type LoadRequest, type LoadResult } from "./http-load";

export interface SignedWebhookLoad {
  origin: string;
  path: string;
  secretKeyHex: string;
  bodies: string[];
  /** An open stream at `perSec` on average, or `concurrency` clients in a closed loop. */
  shape: { kind: "stream"; perSec: number; seed: number } | { kind: "closed"; concurrency: number; timeLimitMs: number };
}

serveParent<Record<string, never>, { pid: number }>(async () => ({
  info: { pid: process.pid },
  handlers: {
    /** Warms this fresh process (JIT, the HTTP client) on requests the app refuses without work: POSTs to a loader-only route. */
    warm: async (args): Promise<number> => {
      const { origin, path, count } = args as { origin: string; path: string; count: number };
      const request = { path, headers: { "content-type": "application/json" }, body: "{}" };
      await runClosedLoop({ origin, concurrency: 1, count, timeLimitMs: 60_000, requests: () => request });
      await runOpenStream({ origin, perSec: 200, seed: 1, count, requests: () => request });
      return count;
    },
    webhooks: (args): Promise<LoadResult> => {
      const load = args as SignedWebhookLoad;
      const signed = (i: number): LoadRequest => {
        const body = load.bodies[i]!;
        const nonce = String(Math.floor(Date.now() / 1000));
        return { path: load.path, headers: { "content-type": "application/json", "x-nonce": nonce, "x-signature": signWebhook({ secretHex: load.secretKeyHex, nonce, rawBody: body }) }, body };
      };
      const count = load.bodies.length;
      return load.shape.kind === "stream"
        ? runOpenStream({ origin: load.origin, perSec: load.shape.perSec, seed: load.shape.seed, count, requests: signed })
        : runClosedLoop({ origin: load.origin, concurrency: load.shape.concurrency, count, timeLimitMs: load.shape.timeLimitMs, requests: signed });
    },
  },
  stop: async () => undefined,
}));
