// `npm run dev`: the whole product on this machine with no Shopify account and no network —
// the gateway sandbox, the Shopify stand-in (checkout simulator and Payments Apps API) and
// the app (Vite dev server, SQLite, background workers), then the URLs to open.
import { ConfigurationError, parseEnv, type AppEnv } from "../app/config/env.server";
import { applyMigrations } from "../app/db/migrate.server";
import { createServices } from "../app/services.server";
import { ensureShop } from "../app/shops/shop-credentials.server";
import { offlineSessionId } from "../app/shops/shopify-directory.server";
import { startShopifyStandin } from "../dev/shopify-standin/server";
import { startSandbox } from "../sandbox/server";
import { portRefusal, startAppServer } from "../server/app";

const DEV_SHOP = "demo-shop.myshopify.com";
const DEV_ACCESS_TOKEN = "shpat_local_development_only";
const appPort = Number(process.env.PORT ?? 3000);
const sandboxPort = Number(process.env.SANDBOX_PORT ?? 4010);
const standinPort = Number(process.env.STANDIN_PORT ?? 4020);
const appUrl = process.env.SHOPIFY_APP_URL ?? `http://localhost:${appPort}`;

/** A server of the run could not listen: which port, and the variable that moves it, instead of a stack trace. */
async function listening<T>(what: string, port: number, portVariable: string, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    const code = portRefusal(error);
    if (!code) throw error;
    console.error(`The ${what} cannot listen on port ${port} (${code}): another process has it (an earlier npm run dev?). Stop it, or set ${portVariable} to another port.`);
    process.exit(1);
  }
}

const devValues = {
  NODE_ENV: "development",
  PORT: String(appPort),
  // Loopback only, as the sandbox and the stand-in: the development login below opens the
  // merchant admin without Shopify, so no other machine of the network may reach it.
  HOST: "127.0.0.1",
  SHOPIFY_APP_URL: appUrl,
  DATABASE_URL: process.env.DATABASE_URL ?? "file:./data/app.db",
  GATEWAY_SANDBOX_URL: `http://localhost:${sandboxPort}/api/v1`,
  SHOPIFY_PAYMENTS_APPS_ENDPOINT: `http://localhost:${standinPort}/{shop}/payments_apps/api/{version}/graphql.json`,
  DEV_ADMIN_LOGIN: "true",
  RECONCILE_INTERVAL_MS: process.env.RECONCILE_INTERVAL_MS ?? "30000",
};
// Defaults: a variable already set in the shell wins.
for (const [key, value] of Object.entries(devValues)) process.env[key] ??= value;
// A configuration that cannot run stops here, with its reasons and no stack trace, before anything listens.
let env: AppEnv;
try {
  env = parseEnv(process.env);
} catch (error) {
  if (!(error instanceof ConfigurationError)) throw error;
  console.error(error.message);
  process.exit(1);
}
const sandbox = await listening("gateway sandbox", sandboxPort, "SANDBOX_PORT", () =>
  startSandbox({ port: sandboxPort, host: "127.0.0.1", dbPath: process.env.SANDBOX_DB ?? "data/sandbox.db", publicUrl: `http://localhost:${sandboxPort}` }),
);
const standin = await listening("Shopify stand-in", standinPort, "STANDIN_PORT", () =>
  startShopifyStandin({ port: standinPort, host: "127.0.0.1", appUrl, shopDomain: DEV_SHOP, accessToken: DEV_ACCESS_TOKEN, publicUrl: `http://localhost:${standinPort}` }),
);

await applyMigrations(env.DATABASE_URL);

// The dev shop is "installed": an offline token the stand-in accepts, and its shop record.
const services = createServices(env);
await services.db.session.upsert({
  where: { id: offlineSessionId(DEV_SHOP) },
  create: { id: offlineSessionId(DEV_SHOP), shop: DEV_SHOP, state: "installed", isOnline: false, accessToken: DEV_ACCESS_TOKEN, scope: env.SCOPES },
  update: { accessToken: DEV_ACCESS_TOKEN },
});
await ensureShop(services.db, DEV_SHOP);
const app = await listening("app", appPort, "PORT", () => startAppServer({ env, mode: "vite", services, workers: env.WORKERS }));

console.log(`
Crypto checkout is running locally.

  Merchant admin        ${appUrl}/app?shop=${DEV_SHOP}
  Checkout simulator    ${standin.origin.replace("127.0.0.1", "localhost")}/checkout
  Gateway sandbox       ${sandbox.baseUrl.replace("127.0.0.1", "localhost")}   (dashboard: http://localhost:${sandboxPort}/sandbox/dashboard)

  Sandbox demo device key   ${sandbox.demo.deviceKey}
  Sandbox demo Secret Key   ${sandbox.demo.secretKeyHex}

Start in the admin: connect the gateway sandbox with one click (pasting the demo key and
Secret Key instead also needs the notification URL the Connection page shows set on the
device in the sandbox dashboard), then pay from the checkout simulator. Ctrl-C stops everything.
`);

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    await app.close();
    await standin.close();
    await sandbox.close();
    process.exit(0);
  });
}
