// The product spread over processes for the latency benchmarks: the gateway sandbox and
// the app each in their own child process, the Shopify stand-in in the runner (it only
// records what the app sends it), one shop installed and connected to the sandbox.
import { join } from "node:path";
import { startShopifyStandin, type ShopifyStandin } from "../../dev/shopify-standin/server";
import { freePort } from "../../test/support/free-port";
import type { AppProcessInfo } from "./app-process";
import type { BenchAppOptions, BenchShop } from "./bench-app";
import { UNTHROTTLED_SANDBOX } from "./limits";
import { startChild, type ChildHandle } from "./child-process";
import type { SandboxProcessConfig, SandboxProcessInfo } from "./sandbox-process";

export const BENCH_SHOP = "bench-shop.myshopify.com";

export interface ProcessStack {
  sandbox: ChildHandle<SandboxProcessInfo>;
  app: ChildHandle<AppProcessInfo>;
  standin: ShopifyStandin;
  shop: BenchShop;
  /** POST (or GET) one of the sandbox's control endpoints. */
  control(path: string, body?: unknown, method?: string): Promise<unknown>;
  close(): Promise<void>;
}

export async function startProcessStack(options: {
  databaseUrl: string;
  dir: string;
  serving: "vite" | "prebuilt";
  workers?: boolean;
  env?: Record<string, string>;
  /** Where the app process writes its CPU profile when it stops (--cpu-prof). */
  cpuProfileDir?: string;
}): Promise<ProcessStack> {
  const sandbox = await startChild<SandboxProcessInfo>("./sandbox-process.ts", {
    dbPath: join(options.dir, `sandbox-${options.serving}.db`),
    limits: UNTHROTTLED_SANDBOX,
  } satisfies SandboxProcessConfig);
  const port = await freePort();
  const standin = await startShopifyStandin({ port: 0, host: "127.0.0.1", appUrl: `http://127.0.0.1:${port}`, shopDomain: BENCH_SHOP });
  let app: ChildHandle<AppProcessInfo>;
  try {
    app = await startChild<AppProcessInfo>("./app-process.ts", {
      databaseUrl: options.databaseUrl,
      port,
      sandboxBaseUrl: sandbox.info.baseUrl,
      paymentsAppsEndpoint: `${standin.origin}/{shop}/payments_apps/api/{version}/graphql.json`,
      shops: [{ domain: BENCH_SHOP, accessToken: standin.accessToken }],
      unthrottled: true,
      workers: options.workers ?? true,
      ...(options.env ? { env: options.env } : {}),
      serving: options.serving,
    } satisfies BenchAppOptions, options.cpuProfileDir ? { cpuProfileDir: options.cpuProfileDir } : {});
  } catch (error) {
    await standin.close();
    await sandbox.close();
    throw error;
  }
  return {
    sandbox,
    app,
    standin,
    shop: app.info.shops[0]!,
    async control(path, body, method = "POST") {
      const response = await fetch(`${sandbox.info.origin}${path}`, {
        method,
        headers: { "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`sandbox ${path} answered ${response.status}: ${text.slice(0, 200)}`);
      return text ? JSON.parse(text) : null;
    },
    async close() {
      await app.close();
      await standin.close();
      await sandbox.close();
    },
  };
}
