// Starts the gateway sandbox: opens its SQLite storage, seeds the demo
// merchant, wires the services, serves the API (/api/v1), the payment pages
// (/pay), the control endpoints and dashboard (/sandbox) and the currency
// icons (/media), and runs the ticker that applies time-based transitions.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { AccountService } from "./account-service.js";
import { API_PREFIX, handleApi } from "./api-routes.js";
import { CURRENCIES, currencyIconSvg } from "./catalogue.js";
import { OffsetClock, systemClock, type Clock } from "./clock.js";
import type { SandboxContext } from "./context.js";
import { handleControl } from "./control-routes.js";
import { handleDashboard } from "./dashboard-page.js";
import { DEMO_ACCOUNT, type DemoAccount } from "./demo.js";
import { GatewayFaults } from "./gateway-faults.js";
import { HttpError, redirect, sendJson } from "./http-kit.js";
import { silentLogger, type SandboxLogger } from "./logger.js";
import { OrderService } from "./order-service.js";
import { handlePayPage } from "./pay-page.js";
import { SerialQueue } from "./serial-queue.js";
import { SandboxStore } from "./store.js";
import { DEFAULT_LIMITS, DeviceThrottle, type ThrottleLimits } from "./throttle.js";
import { WebhookDispatcher } from "./webhook-dispatcher.js";

export interface SandboxOptions {
  /** 0 = a random free port. Default 4010. */
  port?: number;
  host?: string;
  /** SQLite file, or ":memory:" (the default). */
  dbPath?: string;
  /** The base clock; the sandbox adds its own (persisted) offset that POST /sandbox/clock advances. */
  clock?: Clock;
  limits?: Partial<ThrottleLimits>;
  /** Seed the demo merchant and device (default true). */
  seedDemo?: boolean;
  /** Base of the links handed out (web_url, icons) when the sandbox is reached through another address. */
  publicUrl?: string;
  /** Interval of the ticker that applies expiry and cancellation (default 1000 ms). */
  tickMs?: number;
  logger?: SandboxLogger;
}

export interface SandboxHandle {
  origin: string;
  /** origin + "/api/v1" */
  baseUrl: string;
  demo: DemoAccount;
  close(): Promise<void>;
}

const ICON_PATH = /^\/media\/currencies\/([A-Z0-9_]+)\.svg$/;

const SERVER_ERROR_HTML = "<!doctype html>\n<html lang=\"en\">\n<head>\n  <title>Server Error (500)</title>\n</head>\n<body>\n  <h1>Server Error (500)</h1><p></p>\n</body>\n</html>\n";

const URL_BASE = "http://sandbox.invalid";

/**
 * The request target on a fixed base. An origin-form target ("/path?query") is read as a path
 * only: one that starts with "//" is a path like any other, never a host. An absolute-form target
 * ("http://host/path", which servers must accept) counts by its path and query. Anything else
 * (such as "*") is null: no route knows it.
 */
function requestUrl(target: string): URL | null {
  try {
    if (target.startsWith("/")) return new URL(URL_BASE + target);
    const absolute = new URL(target);
    if (absolute.protocol !== "http:" && absolute.protocol !== "https:") return null;
    return new URL(URL_BASE + absolute.pathname + absolute.search);
  } catch {
    return null;
  }
}

function sendNotFound(res: ServerResponse): void {
  sendJson(res, 404, { detail: "Not found." });
}

async function route(ctx: SandboxContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = requestUrl(req.url ?? "/");
  if (!url) return sendNotFound(res);
  const path = url.pathname;
  if (path === API_PREFIX || path.startsWith(`${API_PREFIX}/`)) return handleApi(ctx, req, res, url);
  if (path.startsWith("/pay/") && (await handlePayPage(ctx, req, res, url))) return;
  if (path.startsWith("/sandbox/dashboard") && (await handleDashboard(ctx, req, res, url))) return;
  if (path.startsWith("/sandbox/") && (await handleControl(ctx, req, res, url))) return;
  const icon = ICON_PATH.exec(path);
  const def = icon ? CURRENCIES.find((c) => c.symbol === icon[1]) : undefined;
  if (def) {
    const svg = currencyIconSvg(def);
    res.writeHead(200, { "Content-Type": "image/svg+xml", "Content-Length": Buffer.byteLength(svg), "Cache-Control": "public, max-age=86400" });
    res.end(svg);
    return;
  }
  if (path === "/" || path === "/sandbox") return redirect(res, 302, "/sandbox/dashboard");
  sendNotFound(res);
}

export async function startSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  const logger = options.logger ?? silentLogger;
  const host = options.host ?? "127.0.0.1";
  const store = await SandboxStore.open(options.dbPath ?? ":memory:");
  const baseClock = options.clock ?? systemClock;
  const clock = new OffsetClock(baseClock, Number((await store.getState("clock_offset_ms")) ?? "0"));
  const serial = new SerialQueue();
  const accounts = new AccountService(store, clock);
  if (options.seedDemo ?? true) await accounts.seedDemo();
  const dispatcher = new WebhookDispatcher(store, clock, logger, systemClock);
  const orders = new OrderService(store, clock, dispatcher, serial);

  let origin = "";
  const ctx: SandboxContext = {
    store,
    clock,
    accounts,
    orders,
    dispatcher,
    throttle: new DeviceThrottle({ ...DEFAULT_LIMITS, ...options.limits }, clock),
    faults: new GatewayFaults(),
    logger,
    publicBase: () => options.publicUrl?.replace(/\/+$/, "") ?? origin,
  };

  const server = createServer((req, res) => {
    route(ctx, req, res).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (err instanceof HttpError) return sendJson(res, err.status, err.body);
      logger.error("sandbox request failed", { path: req.url?.split("?")[0], error: err instanceof Error ? err.stack : String(err) });
      res.writeHead(500, { "Content-Type": "text/html; charset=utf-8" });
      res.end(SERVER_ERROR_HTML);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 4010, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host === "0.0.0.0" || host === "::" ? "localhost" : host.includes(":") ? `[${host}]` : host;
  origin = `http://${shownHost}:${port}`;

  const ticker = setInterval(() => {
    orders.runDueTransitions().catch((err: unknown) => logger.error("sandbox ticker failed", { error: String(err) }));
  }, options.tickMs ?? 1000);
  ticker.unref();

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      clearInterval(ticker);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await serial.idle();
      await dispatcher.close();
      store.close();
    })();
    return closing;
  };

  logger.info("gateway sandbox listening", { origin });
  return { origin, baseUrl: `${origin}${API_PREFIX}`, demo: { ...DEMO_ACCOUNT }, close };
}
