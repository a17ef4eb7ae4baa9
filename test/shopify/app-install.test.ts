// The install time the app keeps for each shop, through the app's own Shopify configuration
// (app/shopify.server.ts): the embedded admin's token exchange, answered by a fake token
// endpoint. Shopify may deliver app/uninstalled late (a failed or slow delivery retried for
// hours), after the merchant installed the app again; that uninstall is about the earlier
// install and must leave the new one alone, also when the reinstall made no token exchange
// (the old token had not run out) and only the admin's session tokens show it. A renewal with
// the refresh token is not an install: an uninstall made after it is carried out.
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { abstractFetch, setAbstractFetchFunc } from "@shopify/shopify-api/runtime";
import { afterAll, beforeAll, expect, it } from "vitest";
import { setEnvForProcess, type AppEnv } from "../../app/config/env.server";
import type { Database } from "../../app/db/database.server";
import { shareAppDatabase } from "../../app/db.server";
import { createLogger } from "../../app/lib/logger.server";
import { createCredentialCipher } from "../../app/shops/credential-cipher.server";
import { ensureShop, storeCredentials } from "../../app/shops/shop-credentials.server";
import { createShopifyDirectory, offlineSessionId } from "../../app/shops/shopify-directory.server";
import { handleAppUninstalled } from "../../app/shops/shopify-webhooks.server";
import { ROW_DATABASES, rowsDatabaseForFile } from "../support/row-databases";
import { startUninstalledShopify, type UninstalledShopify } from "../support/uninstalled-shopify";

const SHOP = "reinstalling.myshopify.com";
const rows = rowsDatabaseForFile(ROW_DATABASES[0]!, { shopDomain: "placeholder.myshopify.com", webhookToken: "app-install-token-0001" });
let db: Database;
let env: AppEnv;
let app: typeof import("../../app/shopify.server");

/** What the fake token endpoint was asked, by grant type. */
const grants: string[] = [];
const libraryFetch = abstractFetch;

/** Shopify's token endpoint: a token exchange or a refresh grant each issue a new expiring pair. */
const tokenEndpoint: typeof fetch = async (input, init) => {
  const url = String(input instanceof Request ? input.url : input);
  if (!url.endsWith("/admin/oauth/access_token")) throw new Error(`unexpected request to ${url}`);
  const { grant_type } = JSON.parse(String(init?.body)) as { grant_type: string };
  grants.push(grant_type);
  const body = {
    access_token: `shpat_${randomBytes(16).toString("hex")}`,
    scope: env.SCOPES,
    expires_in: 3600,
    refresh_token: `shprt_${randomBytes(16).toString("hex")}`,
    refresh_token_expires_in: 90 * 86_400,
  };
  return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
};

/** A session token as App Bridge sends it for the merchant's admin (HS256 with the app's secret). */
function sessionToken(shop: string): string {
  const now = Math.floor(Date.now() / 1000);
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const payload = { iss: `https://${shop}/admin`, dest: `https://${shop}`, aud: env.SHOPIFY_API_KEY, sub: "42", exp: now + 60, nbf: now - 5, iat: now, jti: randomUUID(), sid: randomUUID() };
  const unsigned = `${part({ alg: "HS256", typ: "JWT" })}.${part(payload)}`;
  return `${unsigned}.${createHmac("sha256", env.SHOPIFY_API_SECRET).update(unsigned).digest("base64url")}`;
}

/** The merchant opens the embedded admin: Shopify's authentication, then the shop's row, as every admin loader starts (adminShop). */
async function openAdmin(shop: string, token = sessionToken(shop)) {
  const { session } = await app.authenticate.admin(new Request(`${env.SHOPIFY_APP_URL}/app`, { headers: { authorization: `Bearer ${token}` } }));
  return ensureShop(db, session.shop);
}

/** The hour of the stored offline token is over (the merchant was away). */
async function tokenRunsOut(shop: string) {
  await db.session.update({ where: { id: offlineSessionId(shop) }, data: { expires: new Date(Date.now() - 60_000) } });
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 5));
const deps = () => ({ db, logger: createLogger({ level: "silent" }), shopify: uninstalled.directory, clock: { now: () => new Date() } });
const shopRow = () => db.shop.findUniqueOrThrow({ where: { shopDomain: SHOP } });
const offlineSessions = () => db.session.count({ where: { shop: SHOP } });

// Shopify refuses every shop's token, as after an uninstall: the uninstalls here are real.
let uninstalled: UninstalledShopify;
beforeAll(async () => void (uninstalled = await startUninstalledShopify()));
afterAll(() => uninstalled?.close());

beforeAll(async () => {
  ({ db } = rows());
  env = setEnvForProcess({ NODE_ENV: "test", LOG_LEVEL: "silent", CREDENTIALS_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString("base64")}` });
  // The app's Shopify configuration on this file's database.
  shareAppDatabase(db);
  app = await import("../../app/shopify.server");
  setAbstractFetchFunc(tokenEndpoint);
});

afterAll(() => setAbstractFetchFunc(libraryFetch));

it("an uninstall triggered before the app was installed again, delivered after, leaves the new install alone", async () => {
  // First install: the merchant opens the app, the admin exchanges a token.
  await openAdmin(SHOP);
  expect(grants).toEqual(["urn:ietf:params:oauth:grant-type:token-exchange"]);
  const firstInstall = (await shopRow()).installedAt!;

  // The merchant uninstalls; Shopify's delivery of app/uninstalled fails (or is still on its way).
  await pause();
  const uninstalledAt = new Date();
  await pause();
  // Installed again once the old token had run out: the admin exchanges a new one.
  await tokenRunsOut(SHOP);
  await openAdmin(SHOP);
  expect(grants).toHaveLength(2);
  const reinstalled = await shopRow();
  expect(reinstalled.installedAt!.getTime()).toBeGreaterThan(uninstalledAt.getTime());
  expect(reinstalled.installedAt!.getTime()).toBeGreaterThan(firstInstall.getTime());
  // The merchant connects the gateway.
  const cipher = createCredentialCipher(env.CREDENTIALS_ENCRYPTION_KEYS);
  await storeCredentials(db, cipher, await openAdmin(SHOP), "live", { deviceKey: "5b0f3c1e-8d2a-4c7b-9e61-2f4a7d9c0b13", secretKeyHex: randomBytes(32).toString("hex") });

  // Shopify's retry of the uninstall (triggered before the reinstall) arrives.
  await handleAppUninstalled(deps(), SHOP, uninstalledAt);

  const after = await shopRow();
  expect({ uninstalled: after.uninstalledAt !== null, liveCredentials: after.liveDeviceKeyEnc !== null, offlineSessions: await offlineSessions() }).toEqual({
    uninstalled: false,
    liveCredentials: true,
    offlineSessions: 1,
  });
  // The app's session storage keeps the new token sealed, and opens it.
  expect((await db.session.findUniqueOrThrow({ where: { id: offlineSessionId(SHOP) } })).accessToken).not.toMatch(/shpat_/);
  expect((await app.sessionStorage?.loadSession(offlineSessionId(SHOP)))?.accessToken).toMatch(/^shpat_/);
});

it("a renewal with the refresh token is not an install: an uninstall made after it is carried out", async () => {
  const installedAt = (await shopRow()).installedAt!;
  const before = grants.length;
  await pause();
  // The outbox renews the shop's token in the background, without the merchant.
  await tokenRunsOut(SHOP);
  const directory = createShopifyDirectory({
    db,
    cipher: createCredentialCipher(env.CREDENTIALS_ENCRYPTION_KEYS),
    apiVersion: env.PAYMENTS_API_VERSION,
    apiKey: env.SHOPIFY_API_KEY,
    apiSecretKey: env.SHOPIFY_API_SECRET,
    appUrl: env.SHOPIFY_APP_URL,
    fetch: tokenEndpoint,
  });
  expect(await directory.forShop(SHOP)).not.toBeNull();
  // And the library renews it in its own request paths (here: a call made without the merchant).
  await tokenRunsOut(SHOP);
  await app.unauthenticated.admin(SHOP);
  expect(grants.slice(before)).toEqual(["refresh_token", "refresh_token"]);
  expect((await shopRow()).installedAt).toEqual(installedAt);

  // The merchant uninstalls after those renewals: the uninstall is carried out.
  await pause();
  await handleAppUninstalled(deps(), SHOP, new Date());
  const after = await shopRow();
  expect({ uninstalled: after.uninstalledAt !== null, liveCredentials: after.liveDeviceKeyEnc !== null, offlineSessions: await offlineSessions() }).toEqual({
    uninstalled: true,
    liveCredentials: false,
    offlineSessions: 0,
  });
});

it("installing again after an uninstall was carried out marks the shop installed from then on", async () => {
  const uninstalledAt = new Date();
  await pause();
  await openAdmin(SHOP);
  const after = await shopRow();
  expect(after.uninstalledAt).toBeNull();
  expect(after.installedAt!.getTime()).toBeGreaterThan(uninstalledAt.getTime());
  expect(await offlineSessions()).toBe(1);
});

it("an uninstall delivered late, after a reinstall made while the old offline token still ran, leaves the new install alone", async () => {
  const shop = "quick-reinstall.myshopify.com";
  const row = () => db.shop.findUniqueOrThrow({ where: { shopDomain: shop } });
  // The first install, fifty minutes ago: the admin exchanged a token for an hour.
  const exchanges = grants.length;
  await openAdmin(shop);
  expect(grants).toHaveLength(exchanges + 1);
  await db.shop.update({ where: { shopDomain: shop }, data: { installedAt: new Date(Date.now() - 50 * 60_000) } });
  await db.session.update({ where: { id: offlineSessionId(shop) }, data: { expires: new Date(Date.now() + 10 * 60_000) } });

  // Ten minutes ago the merchant uninstalled; Shopify's app/uninstalled is still on its way.
  const uninstalledAt = new Date(Date.now() - 10 * 60_000);

  // Now the merchant installs the app again and opens it. The stored token has not run out, so
  // the library makes no token exchange (no afterAuth); the session token, which Shopify signs
  // only for an installed app, records the install.
  const token = sessionToken(shop);
  const reinstalled = await openAdmin(shop, token);
  expect(grants).toHaveLength(exchanges + 1);
  expect(reinstalled.installedAt!.getTime()).toBeGreaterThan(uninstalledAt.getTime());
  // The admin in use sends the same token with each request until it asks for a new one: no
  // request under it writes the time again. (Two tokens minted a second apart would be two
  // times, the later one rightly recorded.)
  expect((await openAdmin(shop, token)).installedAt).toEqual(reinstalled.installedAt);
  const cipher = createCredentialCipher(env.CREDENTIALS_ENCRYPTION_KEYS);
  await storeCredentials(db, cipher, reinstalled, "live", { deviceKey: "5b0f3c1e-8d2a-4c7b-9e61-2f4a7d9c0b13", secretKeyHex: randomBytes(32).toString("hex") });

  // Shopify's retry of the uninstall, triggered before the reinstall, arrives.
  await handleAppUninstalled(deps(), shop, uninstalledAt);
  const kept = await row();
  expect({ uninstalled: kept.uninstalledAt !== null, liveCredentials: kept.liveDeviceKeyEnc !== null }).toEqual({ uninstalled: false, liveCredentials: true });

  // One triggered after the reinstall is a real uninstall.
  await handleAppUninstalled(deps(), shop, new Date());
  const gone = await row();
  expect({ uninstalled: gone.uninstalledAt !== null, liveCredentials: gone.liveDeviceKeyEnc !== null }).toEqual({ uninstalled: true, liveCredentials: false });
});
