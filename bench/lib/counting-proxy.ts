// A counting proxy in front of the gateway sandbox: forwards every request unchanged and
// records each gateway API call (/api/v1/...) with the simulated time, the device (by a
// short tag, never the key), the endpoint, the answer's status and what the driver was
// doing at the time (its "phase"), so calls can be attributed.
import { createServer, request as httpRequest } from "node:http";
import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import { listenOnLoopback } from "./loopback";

export interface GatewayCallRecord {
  at: number;
  device: string;
  endpoint: "orders.create" | "orders.list" | "orders.info" | "currencies" | "device.create" | "other";
  /** The answer's status; 0 while under way, or when the call ended without an answer. */
  status: number;
  phase: string;
  /** Real milliseconds from the request to the end of the sandbox's answer. */
  ms: number;
}

export interface CountingProxy {
  url: string;
  calls: GatewayCallRecord[];
  phase: string;
  close(): Promise<void>;
}

export function deviceTag(deviceKey: string): string {
  return createHash("sha256").update(deviceKey).digest("hex").slice(0, 12);
}

function endpointOf(method: string, path: string): GatewayCallRecord["endpoint"] {
  const p = path.replace(/^\/api\/v1/, "").replace(/\/+$/, "");
  if (p === "/orders" && method === "POST") return "orders.create";
  if (p === "/orders" && method === "GET") return "orders.list";
  if (p.startsWith("/orders/info/")) return "orders.info";
  if (p === "/currencies") return "currencies";
  if (p === "/device" && method === "POST") return "device.create";
  return "other";
}

export async function startCountingProxy(targetOrigin: string, now: () => number): Promise<CountingProxy> {
  const target = new URL(targetOrigin);
  const proxy: CountingProxy = { url: "", calls: [], phase: "setup", close: async () => undefined };
  const server = createServer((req, res) => {
    const t0 = performance.now();
    const path = (req.url ?? "/").split("?")[0]!;
    // Recorded when sent on, not when answered: the gateway counts a call against the device's
    // quota even when its answer never comes back (a reset, a timeout). Status 0 marks that.
    let record: GatewayCallRecord | null = null;
    if (path.startsWith("/api/v1/")) {
      const key = req.headers["x-device-id"];
      record = {
        at: now(),
        device: typeof key === "string" ? deviceTag(key) : "none",
        endpoint: endpointOf(req.method ?? "GET", path),
        status: 0,
        phase: proxy.phase,
        ms: 0,
      };
      proxy.calls.push(record);
    }
    let done = false;
    const ended = (status: number) => {
      if (done) return;
      done = true;
      if (record) Object.assign(record, { status, ms: performance.now() - t0 });
    };
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        answer.on("end", () => ended(answer.statusCode ?? 0));
        // Cut off mid-answer: the call got no usable answer.
        answer.on("close", () => ended(answer.complete ? (answer.statusCode ?? 0) : 0));
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      ended(0);
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  Object.assign(proxy, await listenOnLoopback(server));
  return proxy;
}
