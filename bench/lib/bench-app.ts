// Starts the real app for a benchmark the way test/support/stack.ts does (Vite dev mode,
// real routes, workers), on a given database, with shops installed and each connected to
// the gateway sandbox (its own sandbox merchant, device and Secret Key).
import { parseEnv, type AppEnv } from "../../app/config/env.server";
import { applyMigrations } from "../../app/db/migrate.server";
import { createLogger } from "../../app/lib/logger.server";
import type { Clock } from "../../app/payments/deps";
import type { AppServices } from "../../app/services.server";
import { connectSandbox } from "../../app/shops/onboarding.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { offlineSessionId } from "../../app/shops/shopify-directory.server";
import { startAppServer, type AppServer } from "../../server/app";
import { createServices } from "../../app/services.server";
import { UNTHROTTLED_APP_ENV } from "./limits";
import { startPrebuiltAppServer } from "./prebuilt-server";

export interface BenchAppOptions {
  databaseUrl: string;
  port: number;
  sandboxBaseUrl: string;
  /** Template with {shop} and {version} for the Payments Apps API (the stand-in, or a router in front of several). */
  paymentsAppsEndpoint: string;
  shops: { domain: string; accessToken: string }[];
  /** Raise the app's gateway quota (GATEWAY_LIMIT_* variables) so it never waits; false keeps the real limits. */
  unthrottled: boolean;
  workers: boolean;
  /** "vite": Vite dev mode, as `npm run dev` and the tests serve it; "prebuilt": the production request path. */
  serving: "vite" | "prebuilt";
  clock?: Clock;
  env?: Record<string, string>;
}

/** What the benchmark needs to drive a shop. The keys stay in the benchmark's memory, never in its output. */
export interface BenchShop {
  domain: string;
  shopId: string;
  webhookToken: string;
  deviceKey: string;
  secretKeyHex: string;
}

export interface LogCounts {
  lines: number;
  warn: number;
  error: number;
  /** Warn and error lines by message. */
  messages: Record<string, number>;
  /** The first few warn/error lines (already scrubbed of secrets by the app's logger). */
  samples: string[];
}

export interface BenchApp {
  env: AppEnv;
  app: AppServer;
  services: AppServices;
  shops: BenchShop[];
  logs: LogCounts;
  close(): Promise<void>;
}

export async function startBenchApp(options: BenchAppOptions): Promise<BenchApp> {
  await applyMigrations(options.databaseUrl);
  const appUrl = `http://127.0.0.1:${options.port}`;
  const values: Record<string, string> = {
    NODE_ENV: "test",
    PORT: String(options.port),
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    DATABASE_URL: options.databaseUrl,
    SHOPIFY_APP_URL: appUrl,
    SHOPIFY_API_KEY: "bench-api-key",
    SHOPIFY_API_SECRET: "bench-api-secret",
    // The live gateway is never reached from a benchmark: a closed port.
    GATEWAY_BASE_URL: "http://127.0.0.1:9/api/v1",
    GATEWAY_SANDBOX_URL: options.sandboxBaseUrl,
    SHOPIFY_PAYMENTS_APPS_ENDPOINT: options.paymentsAppsEndpoint,
    // The workers' polling as in production (OUTBOX_INTERVAL_MS is left at its default): new
    // work wakes them, and their idle passes share the process with the requests measured.
    RECONCILE_INTERVAL_MS: "3600000",
    ...(options.unthrottled ? UNTHROTTLED_APP_ENV : {}),
    ...options.env,
  };
  // Route modules (loaded by Vite) read the same configuration from process.env.
  Object.assign(process.env, values);
  const env = parseEnv(values);
  // Log lines are formatted as in production (JSON, secrets scrubbed) but not written out.
  const logs: LogCounts = { lines: 0, warn: 0, error: 0, messages: {}, samples: [] };
  const logger = createLogger({
    level: "info",
    sink: (line) => {
      logs.lines++;
      const level = /"level":"(warn|error)"/.exec(line)?.[1];
      if (level === "warn") logs.warn++;
      if (level === "error") logs.error++;
      if (!level) return;
      const msg = /"msg":"((?:[^"\\]|\\.)*)"/.exec(line)?.[1] ?? "?";
      logs.messages[`${level}: ${msg}`] = (logs.messages[`${level}: ${msg}`] ?? 0) + 1;
      if (logs.samples.length < 10) logs.samples.push(line.slice(0, 400));
    },
  });
  const services = createServices(env, { logger, ...(options.clock ? { clock: options.clock } : {}) });
  const app =
    options.serving === "vite"
      ? await startAppServer({ env, mode: "vite", workers: options.workers, services })
      : await startPrebuiltAppServer({ env, services, workers: options.workers });

  const shops: BenchShop[] = [];
  for (const shop of options.shops) {
    await services.db.session.create({
      data: { id: offlineSessionId(shop.domain), shop: shop.domain, state: "installed", isOnline: false, accessToken: shop.accessToken, scope: "write_payment_gateways,write_payment_sessions" },
    });
    const connected = await connectSandbox(services, shop.domain);
    if (!connected.ok) throw new Error(`could not connect ${shop.domain} to the sandbox: ${connected.message}`);
    const row = connected.shop;
    shops.push({
      domain: shop.domain,
      shopId: row.id,
      webhookToken: row.webhookToken,
      deviceKey: services.cipher.decrypt(row.sandboxDeviceKeyEnc!, credentialContext(row.id, "sandbox", "device-key")),
      secretKeyHex: services.cipher.decrypt(row.sandboxSecretKeyEnc!, credentialContext(row.id, "sandbox", "secret-key")),
    });
  }
  return { env, app, services, shops, logs, close: () => app.close() };
}
