// Crash safety: the app runs as its own process (on PostgreSQL, the database for several
// processes; the test process reads and reconciles beside it) and is killed with SIGKILL at random
// points during a stream of payments and gateway webhooks. After the last restart, every
// acknowledged webhook is processed and every started payment reaches its final state in
// Shopify, exactly once.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseEnv } from "../../app/config/env.server";
import { applyMigrations } from "../../app/db/migrate.server";
import { silentLogger } from "../../app/lib/logger.server";
import { reconcileOnce } from "../../app/payments/reconcile";
import { createOrderWithCurrency } from "../../app/payments/start-payment-session";
import { deliverDueMessages } from "../../app/payments/outbox";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import { createServices, type AppServices } from "../../app/services.server";
import { connectSandbox } from "../../app/shops/onboarding.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { offlineSessionId } from "../../app/shops/shopify-directory.server";
import { startShopifyStandin, type ShopifyStandin } from "../../dev/shopify-standin/server";
import { startSandbox, type SandboxHandle } from "../../sandbox/server";
import { createTestPostgresDatabase } from "../support/postgres";
import { freePort } from "../support/free-port";
import { TEST_SHOP, waitFor } from "../support/stack";

// `npm test` runs a short stream; `npm run test:crash` a long one (CRASH_PAYMENTS).
const PAYMENTS = Number(process.env.CRASH_PAYMENTS ?? 8);
const MIN_KILLS = Number(process.env.CRASH_MIN_KILLS ?? 3);
let dir: string;
let sandbox: SandboxHandle;
let standin: ShopifyStandin;
let services: AppServices;
let values: Record<string, string>;
let child: ChildProcess | null = null;
let appUrl: string;
let kills = 0;
let database: Awaited<ReturnType<typeof createTestPostgresDatabase>>;

// The app is one Node process with tsx's loader inside it (not the tsx CLI, which would
// run the app in a grandchild that a SIGKILL of the CLI leaves running).
function startApp(): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "server/main.ts"], {
    env: { ...process.env, ...values },
    stdio: process.env.CRASH_TEST_VERBOSE ? "inherit" : "ignore",
  });
}

function exited(proc: ChildProcess): Promise<void> {
  return proc.exitCode !== null || proc.signalCode !== null ? Promise.resolve() : new Promise((resolve) => proc.once("exit", () => resolve()));
}

async function appUp(): Promise<boolean> {
  try {
    return (await fetch(`${appUrl}/healthz`, { signal: AbortSignal.timeout(1000) })).ok;
  } catch {
    return false;
  }
}

async function killAndRestart(): Promise<void> {
  if (child) {
    child.kill("SIGKILL");
    await exited(child);
    kills++;
    // Dead for real: nothing answers on the app's port any more.
    expect(await appUp()).toBe(false);
  }
  child = startApp();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "crash-"));
  database = await createTestPostgresDatabase();
  const port = await freePort();
  appUrl = `http://127.0.0.1:${port}`;
  sandbox = await startSandbox({ port: 0, host: "127.0.0.1", dbPath: join(dir, "sandbox.db"), tickMs: 100, limits: { perMinute: 10_000, perDay: 100_000, criticalPerMinute: 10_000, criticalPerDay: 100_000 } });
  standin = await startShopifyStandin({ port: 0, host: "127.0.0.1", appUrl, shopDomain: TEST_SHOP });
  values = {
    NODE_ENV: "test",
    PORT: String(port),
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    DATABASE_URL: database.url,
    SHOPIFY_APP_URL: appUrl,
    GATEWAY_BASE_URL: "http://127.0.0.1:9/api/v1",
    GATEWAY_SANDBOX_URL: sandbox.baseUrl,
    SHOPIFY_PAYMENTS_APPS_ENDPOINT: `${standin.origin}/{shop}/payments_apps/api/{version}/graphql.json`,
    OUTBOX_INTERVAL_MS: "200",
    RECONCILE_INTERVAL_MS: "3600000",
  };
  await applyMigrations(values.DATABASE_URL!);
  services = createServices(parseEnv(values), { logger: silentLogger });
  await services.db.session.create({ data: { id: offlineSessionId(TEST_SHOP), shop: TEST_SHOP, state: "installed", isOnline: false, accessToken: standin.accessToken } });
  const connected = await connectSandbox(services, TEST_SHOP);
  if (!connected.ok) throw new Error(connected.message);
  child = startApp();
  await waitFor(appUp, "the app to start", 60_000);
}, 90_000);

afterAll(async () => {
  if (child) {
    child.kill("SIGKILL");
    await exited(child);
  }
  await services?.db.$disconnect();
  await standin?.close();
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
  await database?.drop();
});

it("every acknowledged webhook and every started payment ends final after SIGKILLs", async () => {
  const sessions: string[] = [];
  const pickedOnAppPage = new Set<string>();
  const expired = new Set<string>();
  let stop = false;
  // Kill the app at random moments while payments and webhooks flow.
  const killer = (async () => {
    while (!stop) {
      // Kill a running app at a random point of its work, then start it again.
      await waitFor(async () => stop || (await appUp()), "the app up before a kill", 60_000);
      await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 1700));
      if (!stop) await killAndRestart();
    }
  })();

  try {
  // At least PAYMENTS payments, and on until the app has been killed MIN_KILLS times.
  for (let i = 0; (i < PAYMENTS || kills < MIN_KILLS) && i < PAYMENTS * 5; i++) {
    const session = standin.state.createPaymentSession({ test: true, amount: `${10 + i}.50` });
    // Shopify retries a payment session until the app gives a lasting answer. After a crash
    // between sending a coin-less order and storing its answer, that order is found by its
    // reference but has no page to send the shopper to: the shopper picks the coin on the
    // app's page instead, and only that order can take money.
    const delivered = await waitFor(async () => {
      const { delivery } = await standin.state.redeliverPayment(session.id);
      return delivery.status === 200 ? delivery : null;
    }, `payment ${i} answered`, 180_000);
    let payment = await services.db.payment.findFirst({ where: { shopifyPaymentId: session.id } });
    if (!payment) throw new Error(`the app answered but stored no payment for ${session.id}`);
    if (payment.gatewayOrderId === null) {
      expect(payment.state).toBe("started");
      expect(delivered.redirectUrl).toContain("/pay/");
      // Picked again while the gateway's quota for orders is used up, as a shopper would.
      let lastPick = "";
      await waitFor(async () => {
        const picked = await createOrderWithCurrency(services, payment!.id, "BTC");
        lastPick = picked.ok ? "ok" : `${picked.reason}: ${picked.message}`;
        return picked.ok || null;
      }, "the coin picked on the app's page", 120_000).catch((error: unknown) => {
        throw new Error(`${String(error)}; the last pick answered ${lastPick}`);
      });
      payment = await services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
      pickedOnAppPage.add(session.id);
    }
    sessions.push(session.id);
    expect(delivered.redirectUrl).toBeTruthy();
    const act = (body: Record<string, unknown>) =>
      fetch(`${sandbox.origin}/sandbox/orders/${payment.gatewayOrderId}/actions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    await act({ action: "choose_currency", currency: "BTC" });
    if (i % 4 === 3) {
      expired.add(session.id);
      await act({ action: "expire" });
    } else {
      await act({ action: "pay", amount: "exact" });
      await act({ action: "confirm" });
    }
  }
  } finally {
    stop = true;
    await killer;
  }
  await waitFor(appUp, "the app after the last restart", 60_000);
  expect(kills).toBeGreaterThanOrEqual(MIN_KILLS);
  process.stdout.write(`SIGKILLed the app ${kills} times during ${sessions.length} payments (${pickedOnAppPage.size} sent to the app's page after a coin-less order's answer was lost)\n`);

  // Webhooks sent while the app was down are lost (the gateway does not retry): the
  // reconciler reads those orders back. A webhook the app acknowledged may still come in after
  // a read settled its payment (its delivery was slow): it too must be processed.
  const unprocessed = () => services.db.gatewayWebhook.count({ where: { processedAt: null } });
  await waitFor(async () => {
    await reconcileOnce(services, { worker: "crash-test", force: true });
    await processWebhookInbox(services, { worker: "crash-test" });
    await deliverDueMessages(services, { worker: "crash-test" });
    return sessions.every((id) => ["RESOLVED", "REJECTED"].includes(standin.state.session(id)?.state.code ?? "")) && (await unprocessed()) === 0;
  }, "every payment final in Shopify and every acknowledged webhook processed", 60_000);

  expect(await unprocessed()).toBe(0);
  for (const id of sessions) {
    const state = standin.state.session(id)!.state.code;
    expect(state, id).toBe(expired.has(id) ? "REJECTED" : "RESOLVED");
    const finals = standin.state.operationsFor(id).filter((op) => op.operationName === "PaymentSessionResolve" || op.operationName === "PaymentSessionReject");
    // A call may be repeated after a crash (same call, same answer), never a conflicting one.
    expect(new Set(finals.map((op) => op.operationName)).size, id).toBe(1);
  }
  expect(standin.state.invalidOperations()).toEqual([]);
  // Never two gateway orders that can take money for one payment session, whatever moment the
  // app died at: a second one only where the first was left without a coin, out of reach.
  const shop = await services.db.shop.findUniqueOrThrow({ where: { shopDomain: TEST_SHOP } });
  const deviceKey = services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"));
  const orders = (await (await fetch(`${sandbox.baseUrl}/orders/`, { headers: { "X-Device-Id": deviceKey } })).json()) as { reference: string | null; currency_id: string | null }[];
  const perReference = new Map<string, number>();
  for (const order of orders) if (order.reference && order.currency_id) perReference.set(order.reference, (perReference.get(order.reference) ?? 0) + 1);
  expect([...perReference.values()].every((n) => n === 1)).toBe(true);
  expect(perReference.size).toBe(sessions.length);
  const total = orders.filter((order) => order.reference && sessions.includes(order.reference)).length;
  expect(total).toBe(sessions.length + pickedOnAppPage.size);
}, 600_000);
