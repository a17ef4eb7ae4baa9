// Starts the whole product for a test: the gateway sandbox, the Shopify stand-in and the
// real app server (Vite dev mode, real routes, workers on), on a fresh database, with one
// shop installed and connected to the sandbox. Nothing here fakes the app itself.
import { randomUUID } from "node:crypto";
import { forThisFile } from "./for-this-file";
import { onFreePort } from "./free-port";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseEnv, type AppEnv } from "../../app/config/env.server";
import { applyMigrations } from "../../app/db/migrate.server";
import { openDatabase } from "../../app/db/database.server";
import { createLogger, type Logger } from "../../app/lib/logger.server";
import { reconcileOnce } from "../../app/payments/reconcile";
import type { RetryPolicy } from "../../app/gateway/retry";
import type { Clock } from "../../app/payments/deps";
import type { AppServices } from "../../app/services.server";
import { connectGateway, connectSandbox, notificationUrl } from "../../app/shops/onboarding.server";
import { offlineSessionId } from "../../app/shops/shopify-directory.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { signWebhook } from "../../app/gateway/webhook-signature";
import { createTestPostgresDatabase } from "./postgres";
import { startSandbox, type SandboxHandle } from "../../sandbox/server";
import type { CostLimit } from "../../dev/shopify-standin/cost-bucket";
import { startShopifyStandin, type ShopifyStandin } from "../../dev/shopify-standin/server";
import type { CheckoutOverrides } from "../../dev/shopify-standin/simulator";
import { SERVER_BUILD_URL, startAppServer, type AppServer } from "../../server/app";

export const TEST_SHOP = "demo-shop.myshopify.com";

export interface StackOptions {
  databaseUrl?: string;
  workers?: boolean;
  clock?: Clock;
  logLines?: string[];
  env?: Record<string, string>;
  sandboxDbPath?: string;
  /** The app's gateway clients' retry waits: shortened for a file that fails the gateway on purpose. */
  gatewayRetry?: Partial<RetryPolicy>;
  /** The gateway's throttles, on both sides; "spec" keeps SPEC.md's numbers. Default: raised, so suites are not throttled. */
  gatewayLimits?: "spec" | "raised";
  /** Shopify's cost limit on the stand-in's GraphQL endpoint; none by default. */
  shopifyCostLimit?: CostLimit;
}

const RAISED_LIMITS = { perMinute: 1_000, perDay: 50_000, criticalPerMinute: 500, criticalPerDay: 20_000 };

export interface Stack {
  env: AppEnv;
  app: AppServer;
  services: AppServices;
  sandbox: SandboxHandle;
  standin: ShopifyStandin;
  shopDomain: string;
  logger: Logger;
  /** POST a JSON body to one of the sandbox's control endpoints. */
  sandboxControl(path: string, body?: unknown, method?: string): Promise<unknown>;
  /** Restarts the app process's server and services on the same database (a crash and restart). */
  restartApp(options?: { workers?: boolean }): Promise<void>;
  close(): Promise<void>;
}

export async function waitFor<T>(probe: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > until) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * How the tests serve the app: Vite's dev server by default, or production's request path,
 * the build in build/ (`npm run test:prebuilt` makes it first), with TEST_APP_SERVING=build.
 */
const APP_SERVING = appServing(process.env.TEST_APP_SERVING);

function appServing(asked: string | undefined): "vite" | "build" {
  if (asked === undefined || asked === "" || asked === "vite") return "vite";
  if (asked !== "build") throw new Error(`TEST_APP_SERVING is "vite" (the default) or "build", not ${JSON.stringify(asked)}`);
  if (!existsSync(fileURLToPath(SERVER_BUILD_URL))) throw new Error("TEST_APP_SERVING=build serves build/: run `npm run build` first");
  return "build";
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), "cryptopay-stack-"));
  const databaseUrl = options.databaseUrl ?? `file:${join(dir, "app.db")}`;
  await applyMigrations(databaseUrl);
  const raised = (options.gatewayLimits ?? "raised") === "raised";
  const sandbox = await startSandbox({
    port: 0,
    host: "127.0.0.1",
    dbPath: options.sandboxDbPath ?? join(dir, "sandbox.db"),
    tickMs: 100,
    ...(raised ? { limits: RAISED_LIMITS } : {}),
  });
  const lines = options.logLines ?? [];
  const logger = createLogger({ level: "debug", sink: (line) => lines.push(line) });
  const overrides = { logger, ...(options.clock ? { clock: options.clock } : {}), ...(options.gatewayRetry ? { gatewayRetry: options.gatewayRetry } : {}) };

  // The app's URL is in its configuration and the stand-in's, so its port is chosen first; a
  // port another file's stack drew in the same moment is given up for a new one.
  const startOnPort = async (appPort: number) => {
    const appUrl = `http://127.0.0.1:${appPort}`;
    // Shopify sees the same time as the app, so tests that move the clock stay consistent.
    const standin = await startShopifyStandin({
      port: 0,
      host: "127.0.0.1",
      appUrl,
      shopDomain: TEST_SHOP,
      ...(options.clock ? { now: () => options.clock!.now() } : {}),
      ...(options.shopifyCostLimit ? { costLimit: options.shopifyCostLimit } : {}),
    });
    const values: Record<string, string> = {
      NODE_ENV: "test",
      PORT: String(appPort),
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      DATABASE_URL: databaseUrl,
      SHOPIFY_APP_URL: appUrl,
      SHOPIFY_API_KEY: "test-api-key",
      SHOPIFY_API_SECRET: "test-api-secret",
      // The live gateway must never be reached from tests: a closed port.
      GATEWAY_BASE_URL: "http://127.0.0.1:9/api/v1",
      GATEWAY_SANDBOX_URL: sandbox.baseUrl,
      SHOPIFY_PAYMENTS_APPS_ENDPOINT: `${standin.origin}/{shop}/payments_apps/api/{version}/graphql.json`,
      OUTBOX_INTERVAL_MS: "200",
      RECONCILE_INTERVAL_MS: "3600000",
      // The clock, logger and fakes a test passes reach workers on the request thread only.
      WORKER_THREAD: "false",
      ...(raised
        ? {
            GATEWAY_LIMIT_PER_MINUTE: String(RAISED_LIMITS.perMinute),
            GATEWAY_LIMIT_PER_DAY: String(RAISED_LIMITS.perDay),
            GATEWAY_CRITICAL_LIMIT_PER_MINUTE: String(RAISED_LIMITS.criticalPerMinute),
            GATEWAY_CRITICAL_LIMIT_PER_DAY: String(RAISED_LIMITS.criticalPerDay),
          }
        : {}),
      ...options.env,
    };
    // Route modules (loaded by Vite) read the same configuration from process.env.
    Object.assign(process.env, values);
    const env = parseEnv(values);
    try {
      return { env, standin, app: await startAppServer({ env, mode: APP_SERVING, workers: options.workers ?? true, overrides }) };
    } catch (error) {
      await standin.close();
      throw error;
    }
  };
  const started = await onFreePort(startOnPort).catch(async (error: unknown) => {
    await sandbox.close();
    throw error;
  });
  const { env, standin } = started;
  let app = started.app;
  const db = app.services.db;
  await db.session.create({
    data: { id: offlineSessionId(TEST_SHOP), shop: TEST_SHOP, state: "installed", isOnline: false, accessToken: standin.accessToken, scope: "write_payment_gateways,write_payment_sessions" },
  });
  const connected = await connectSandbox(app.services, TEST_SHOP);
  if (!connected.ok) throw new Error(`could not connect the sandbox: ${connected.message}`);

  const stack: Stack = {
    env,
    app,
    get services() {
      return app.services;
    },
    sandbox,
    standin,
    shopDomain: TEST_SHOP,
    logger,
    async sandboxControl(path, body, method = "POST") {
      const response = await fetch(`${sandbox.origin}${path}`, {
        method,
        headers: { "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`sandbox ${path} answered ${response.status}: ${text}`);
      return text ? JSON.parse(text) : null;
    },
    async restartApp(restart = {}) {
      await app.close();
      app = await startAppServer({ env, mode: APP_SERVING, workers: restart.workers ?? true, overrides: { ...overrides } });
      stack.app = app;
    },
    async close() {
      // Every stack checks its own logs: no device key, Secret Key or access token may appear.
      const shops = await app.services.db.shop.findMany();
      const secrets = [standin.accessToken, sandbox.demo.deviceKey, sandbox.demo.secretKeyHex];
      for (const shop of shops) {
        for (const env of ["live", "sandbox"] as const) {
          const key = env === "live" ? shop.liveDeviceKeyEnc : shop.sandboxDeviceKeyEnc;
          const secret = env === "live" ? shop.liveSecretKeyEnc : shop.sandboxSecretKeyEnc;
          if (key) secrets.push(app.services.cipher.decrypt(key, credentialContext(shop.id, env, "device-key")));
          if (secret) secrets.push(app.services.cipher.decrypt(secret, credentialContext(shop.id, env, "secret-key")));
        }
      }
      const leaks = lines.filter((line) => secrets.some((secret) => line.includes(secret)));
      // Every stack checks its Shopify calls too: an operation the real schema refuses fails the file,
      // whatever its own assertions read (the app takes such an answer as a lasting failure and retries).
      const invalid = standin.state.invalidOperations();
      await app.close();
      await standin.close();
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
      if (lines.length === 0) throw new Error("the app wrote no log line: the log check would prove nothing");
      if (leaks.length > 0) throw new Error(`secrets found in ${leaks.length} log line(s), e.g. ${leaks[0]!.slice(0, 200)}`);
      if (invalid.length > 0) {
        const first = invalid[0]!;
        throw new Error(`the app sent ${invalid.length} Payments Apps operation(s) the schema refuses (invalid), e.g. ${first.operationName ?? "?"}: ${JSON.stringify(first.validation?.errors ?? []).slice(0, 300)}`);
      }
    },
  };
  return stack;
}

/** A second database client for assertions (the app's own is closed on restart). */
export function openTestDatabase(url: string) {
  return openDatabase(url);
}

/**
 * One stack for the test file: started before its first test, closed after its last.
 * Returns a getter (the stack exists only once the tests run).
 */
export function stackForFile(options: StackOptions = {}): () => Stack {
  return forThisFile("the stack", () => startStack(options), (stack) => stack.close(), 60_000);
}

/**
 * One stack for a `describe.each` block over the two databases: on "postgresql" its own
 * throwaway database, created before the block's first test and dropped after its last.
 */
export function stackOnDatabase(kind: "sqlite" | "postgresql", options: StackOptions = {}): () => Stack {
  const started = forThisFile(
    `the stack on ${kind}`,
    async () => {
      const database = kind === "postgresql" ? await createTestPostgresDatabase() : null;
      const stack = await startStack({ ...options, ...(database ? { databaseUrl: database.url } : {}) });
      stack.logger.info(`stack on ${kind}`);
      return { stack, database };
    },
    async ({ stack, database }) => {
      await stack.close();
      await database?.drop();
    },
    60_000,
  );
  return () => started().stack;
}

/** Whether the sandbox delivers the stack's shop's webhooks or drops them (as a lost notification), from now on. */
export async function setWebhookFaults(stack: Stack, mode: "drop" | "deliver"): Promise<void> {
  await stack.sandboxControl(`/sandbox/devices/${await sandboxDeviceKeyOf(stack)}/webhook-faults`, { mode });
}

/** The sandbox device key the stack's shop is connected with now. */
async function sandboxDeviceKeyOf(stack: Stack): Promise<string> {
  const shop = await stack.services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  return stack.services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"));
}

/**
 * The merchant connects another device of the same gateway account (made with the current
 * device's key, as the gateway allows), as the app allows: its orders are the only ones listed
 * from then on; the earlier device's are read by their identifiers.
 */
export async function connectAnotherSandboxDevice(stack: Stack): Promise<void> {
  const shop = await stack.services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  const response = await fetch(`${stack.sandbox.baseUrl}/device/`, {
    method: "POST",
    headers: { "X-Device-Id": await sandboxDeviceKeyOf(stack), "content-type": "application/json" },
    body: JSON.stringify({ name: "Another device" }),
  });
  const { identifier: newKey } = (await response.json()) as { identifier: string };
  const device = (await stack.sandboxControl(`/sandbox/devices/${newKey}/settings`, { regenerate_secret: true, notification_url: notificationUrl(stack.app.url, shop) })) as { secret_key: string };
  const connected = await connectGateway(stack.services, stack.shopDomain, { env: "sandbox", deviceKey: newKey, secretKeyHex: device.secret_key });
  if (!connected.ok) throw new Error(`the other device could not be connected: ${JSON.stringify(connected)}`);
}

/**
 * A clock for the app that a test moves forward. `advance` takes the gateway sandbox's clock
 * along, so that its listings and expiries date orders as the app does; `advanceAppOnly` moves
 * the app's alone. `stack` is the getter of the stack started with `clock`.
 */
export type MovingClock = ReturnType<typeof movingClock>;

export function movingClock(stack: () => Stack) {
  let offsetMs = 0;
  return {
    clock: { now: () => new Date(Date.now() + offsetMs) },
    offsetMs: () => offsetMs,
    advanceAppOnly(ms: number): void {
      offsetMs += ms;
    },
    async advance(ms: number): Promise<void> {
      offsetMs += ms;
      const sandboxClock = (await stack().sandboxControl("/sandbox/clock", undefined, "GET")) as { offset_seconds: number };
      const behind = offsetMs / 1000 - sandboxClock.offset_seconds;
      if (behind > 0) await stack().sandboxControl("/sandbox/clock", { advance_seconds: behind });
    },
  };
}

/** The sandbox's actions that take an order from its coin's choice to paid in full (ETH), or up to `until`. */
export const PAID_IN_FULL = [{ action: "choose_currency", currency: "ETH" }, { action: "pay", amount: "exact" }, { action: "confirm" }] as const;

/**
 * A test payment started at Shopify's stand-in and its gateway order taken through the sandbox's
 * `actions` in turn (PAID_IN_FULL, or the first of them): the payment's row as created, and
 * Shopify's session.
 */
export async function paymentThrough(stack: Stack, actions: readonly Record<string, unknown>[]) {
  const { session, delivery } = await stack.standin.state.startPayment({ test: true });
  if (delivery.status !== 200) throw new Error(`the payment session was answered ${delivery.status}: ${delivery.body}`);
  const payment = await stack.services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  for (const action of actions) await stack.sandboxControl(`/sandbox/orders/${payment.gatewayOrderId!}/actions`, action);
  return { session, payment, orderId: payment.gatewayOrderId! };
}

/**
 * A test payment started at Shopify's stand-in on a shop whose shoppers pay on the app's own
 * page, where the shopper picked `symbol` (which creates the gateway order): the page's link,
 * the payment's row with its order, and Shopify's session. Throws when either step is refused.
 */
export async function coinPickedOnAppPage(stack: Stack, checkout: CheckoutOverrides = {}, symbol = "ETH") {
  const { session, delivery } = await stack.standin.state.startPayment({ test: true, ...checkout });
  if (delivery.status !== 200 || !delivery.redirectUrl) throw new Error(`the payment session was answered ${delivery.status}: ${delivery.body}`);
  const pageUrl = delivery.redirectUrl;
  const chosen = await fetch(pageUrl, { method: "POST", body: new URLSearchParams({ symbol }), redirect: "manual" });
  if (chosen.status !== 303) throw new Error(`picking ${symbol} was answered ${chosen.status}`);
  const payment = await stack.services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  return { session, pageUrl, payment };
}

/**
 * Shoppers whose webhooks are lost pay in full and come back from the gateway's page (the
 * return reads), one every 8 minutes, with the reconciler's pass halfway between two of them,
 * until the app's clock is `untilOffsetMs` ahead of real time.
 */
export async function shoppersKeepReturning(stack: Stack, time: MovingClock, untilOffsetMs: number): Promise<void> {
  while (time.offsetMs() < untilOffsetMs) {
    const shopper = await paymentThrough(stack, PAID_IN_FULL);
    const back = await fetch(stack.services.links.returnUrl(shopper.payment, "ok"), { redirect: "manual" });
    await back.text();
    await time.advance(4 * 60_000);
    await reconcileOnce(stack.services, { worker: "t" });
    await time.advance(4 * 60_000);
  }
}

/** The token of the stack shop's gateway notification URL (/gateway/webhooks/:token). */
export async function webhookTokenOf(stack: Stack): Promise<string> {
  const shop = await stack.services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain }, select: { webhookToken: true } });
  return shop.webhookToken;
}

/**
 * Posts `body` to the stack shop's gateway notification URL, signed with `secretHex` with the
 * nonce of `at` (now by default), as the gateway sends it; the door's status.
 */
export async function sendGatewayWebhook(stack: Stack, secretHex: string, body: string, at: Date = new Date()): Promise<number> {
  const nonce = String(Math.floor(at.getTime() / 1000));
  const response = await fetch(`${stack.app.url}/gateway/webhooks/${await webhookTokenOf(stack)}`, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", "x-nonce": nonce, "x-signature": signWebhook({ secretHex, nonce, rawBody: body }) },
  });
  await response.body?.cancel();
  return response.status;
}

/** POSTs a payment session body to the app as Shopify does, for `shopDomain` (the stack's shop unless told). */
export function sendPaymentSession(stack: Stack, body: unknown, shopDomain = stack.shopDomain): Promise<Response> {
  return fetch(`${stack.app.url}/payments/session`, {
    method: "POST",
    headers: { "content-type": "application/json", "shopify-shop-domain": shopDomain, "shopify-request-id": randomUUID(), "shopify-api-version": "2026-04" },
    body: JSON.stringify(body),
  });
}
