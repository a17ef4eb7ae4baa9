// Shared by the sandbox tests: a controllable clock, a sandbox on a random port
// with a temp SQLite file, a tiny fetch wrapper and a local webhook receiver.
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { forThisFile } from "../support/for-this-file";
import { startSandbox, type SandboxHandle, type SandboxOptions } from "../../sandbox/server.js";

export class TestClock {
  private ms: number;
  constructor(start = "2026-03-10T12:00:00.000Z") {
    this.ms = Date.parse(start);
  }
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export interface TestSandbox {
  sandbox: SandboxHandle;
  clock: TestClock;
  dbPath: string;
  dir: string;
  /** Stops the sandbox and removes its files. */
  stop(): Promise<void>;
}

/** Request quotas no test reaches, for the files that are not about throttling. */
export const GENEROUS_LIMITS = { perMinute: 100_000, perDay: 1_000_000, criticalPerMinute: 100_000, criticalPerDay: 1_000_000 };

/**
 * One sandbox for a whole test file: started before its tests and stopped after them. The
 * answer reads like a TestSandbox from inside the tests (its fields are there once started).
 */
export function sandboxForThisFile(options: Partial<SandboxOptions> = { limits: GENEROUS_LIMITS }): TestSandbox {
  const current = forThisFile("the test sandbox", () => startTestSandbox(options), (started) => started.stop());
  return {
    get sandbox() {
      return current().sandbox;
    },
    get clock() {
      return current().clock;
    },
    get dbPath() {
      return current().dbPath;
    },
    get dir() {
      return current().dir;
    },
    stop: () => current().stop(),
  };
}

export async function startTestSandbox(options: Partial<SandboxOptions> = {}, clock = new TestClock()): Promise<TestSandbox> {
  const dir = await mkdtemp(join(tmpdir(), "sandbox-test-"));
  const dbPath = join(dir, "sandbox.db");
  const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", dbPath, clock, tickMs: 60_000, ...options });
  return {
    sandbox,
    clock,
    dbPath,
    dir,
    async stop() {
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export interface CallOptions {
  key?: string | null;
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
}

/** One HTTP call; `path` is relative to the origin (e.g. "/api/v1/currencies"). */
export async function call(origin: string, method: string, path: string, opts: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers["X-Device-Id"] = opts.key;
  let body = opts.body;
  if (opts.json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(opts.json);
  }
  const res = await fetch(`${origin}${path}`, { method, headers, body, redirect: "manual" });
  const text = await res.text();
  let json: unknown = undefined;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** A bound caller for one sandbox. */
export function client(sandbox: SandboxHandle) {
  return {
    api: (method: string, path: string, opts: CallOptions = {}) =>
      call(sandbox.origin, method, `/api/v1${path}`, { key: sandbox.demo.deviceKey, ...opts }),
    raw: (method: string, path: string, opts: CallOptions = {}) => call(sandbox.origin, method, path, opts),
    control: (method: string, path: string, json?: unknown) => call(sandbox.origin, method, `/sandbox${path}`, { json }),
  };
}

export interface NewMerchant {
  merchantId: string;
  key: string;
  secret: string;
}

export async function newMerchant(sandbox: SandboxHandle, name = "Test merchant"): Promise<NewMerchant> {
  const r = await call(sandbox.origin, "POST", "/sandbox/merchants", { json: { name } });
  if (r.status !== 200) throw new Error(`merchant sign-up failed: ${r.status} ${r.text}`);
  return { merchantId: r.json.merchant_id, key: r.json.device.identifier, secret: r.json.device.secret_key };
}

export async function action(sandbox: SandboxHandle, identifier: string, body: Record<string, unknown>): Promise<CallResult> {
  return call(sandbox.origin, "POST", `/sandbox/orders/${identifier}/actions`, { json: body });
}

export async function info(sandbox: SandboxHandle, identifier: string, key = sandbox.demo.deviceKey) {
  const r = await call(sandbox.origin, "GET", `/api/v1/orders/info/${identifier}`, { key });
  if (r.status !== 200) throw new Error(`info failed: ${r.status} ${r.text}`);
  return r.json[0];
}

export async function createOrder(sandbox: SandboxHandle, body: Record<string, unknown>, key = sandbox.demo.deviceKey) {
  const r = await call(sandbox.origin, "POST", "/api/v1/orders/", { key, json: body });
  if (r.status !== 200) throw new Error(`create failed: ${r.status} ${r.text}`);
  return r.json;
}

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  rawBody: string;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Status the receiver answers; "hang" never answers. */
  respondWith: number | "hang";
  close(): Promise<void>;
}

export async function startReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const receiver: WebhookReceiver = { url: "", received, respondWith: 200, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, rawBody: Buffer.concat(chunks).toString("utf8") });
      if (receiver.respondWith === "hang") return;
      res.writeHead(receiver.respondWith).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/gateway`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return receiver;
}

/** The signature check a receiver does: hex(HMAC-SHA256(hex-decoded secret, nonce + raw body)). */
export function expectedSignature(secretHex: string, nonce: string, rawBody: string): string {
  return createHmac("sha256", Buffer.from(secretHex, "hex")).update(nonce + rawBody, "utf8").digest("hex");
}

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A real or documented gateway example kept under test/fixtures/gateway/ (see test/fixtures/SOURCES.md). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function gatewayExample(name: string): { body: any; [field: string]: unknown } {
  return JSON.parse(readFileSync(new URL(`../fixtures/gateway/${name}`, import.meta.url), "utf8"));
}
