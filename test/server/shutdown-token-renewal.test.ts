// Graceful shutdown while the readiness pass renews shops' offline tokens. A refresh grant
// spends the shop's refresh token: the pair Shopify answers with is the only good one from then
// on, so it must be stored before the process ends. Told the workers are stopping, the pass
// begins no further renewal, and the one under way stores its pair before the stop returns
// (after which the server disconnects the database and the process exits). A renewal still
// under way when the workers' stop allowance runs out (a slow grant, or a delivery's renewal
// begun late) is waited for a few seconds more, so its pair is stored all the same.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseEnv } from "../../app/config/env.server";
import { openAppDatabase, type Database } from "../../app/db/database.server";
import type { PlainSql } from "../../app/db/plain-sql.server";
import { applyMigrations } from "../../app/db/migrate.server";
import { createLogger } from "../../app/lib/logger.server";
import { createServices } from "../../app/services.server";
import { offlineSessionId } from "../../app/shops/shopify-directory.server";
import { startWorkers } from "../../app/workers.server";

const SHOPS = Array.from({ length: 8 }, (_, i) => `renew-${i}.myshopify.com`);
const REFRESH_MS = 300;

let db: Database;
let sql: PlainSql;
let afterwards: Promise<unknown> = Promise.resolve();

/** The shop's offline pair, its refresh token running out in 10 days (the readiness pass renews it 30 days before). */
async function storeOfflinePair(shop: string): Promise<void> {
  await db.session.create({
    data: {
      id: offlineSessionId(shop),
      shop,
      state: "",
      isOnline: false,
      scope: "write_payment_gateways,write_payment_sessions",
      accessToken: `old-access-${shop}`,
      expires: new Date(Date.now() + 3_600_000),
      refreshToken: `old-refresh-${shop}`,
      refreshTokenExpires: new Date(Date.now() + 10 * 86_400_000),
    },
  });
}

/** Shopify's answer to a refresh grant: the shop's new pair. */
function grantAnswer(shop: string): Response {
  return new Response(
    JSON.stringify({ access_token: `new-access-${shop}`, scope: "write_payment_gateways,write_payment_sessions", expires_in: 3600, refresh_token: `new-refresh-${shop}`, refresh_token_expires_in: 90 * 86_400 }),
    { status: 200, headers: { "content-type": "application/json" } },
  );
}

beforeAll(async () => {
  const url = `file:${join(mkdtempSync(join(tmpdir(), "review-renewal-")), "app.db")}`;
  await applyMigrations(url);
  ({ db, sql } = openAppDatabase(url));
  // Each shop holds an offline pair whose refresh token runs out in 10 days: the readiness pass
  // renews it (30 days before). Stored in clear, as an earlier release did: still read.
  for (const shop of SHOPS) await storeOfflinePair(shop);
});

afterAll(async () => {
  await afterwards;
  await db?.$disconnect();
});

it("stopping, the readiness pass spends no refresh token whose new pair it has not stored by the time the stop returns", async () => {
  /** Refresh grants Shopify received (each spends the shop's refresh token at once), by shop. */
  const spent: string[] = [];
  const fakeShopify: typeof fetch = async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    const match = /^https:\/\/([^/]+)\/admin\/oauth\/access_token$/.exec(url);
    if (!match || init?.method !== "POST") return new Response("{}", { status: 404 });
    const shop = match[1]!;
    spent.push(shop);
    await new Promise((resolve) => setTimeout(resolve, REFRESH_MS));
    return grantAnswer(shop);
  };
  const env = parseEnv({ NODE_ENV: "test", DATABASE_URL: "file:unused.db", LOG_LEVEL: "silent", OUTBOX_INTERVAL_MS: "1000", RECONCILE_INTERVAL_MS: "3600000" });
  const services = createServices(env, { db, sql, logger: createLogger({ level: "silent" }), fetch: fakeShopify });

  // The stop allowance (20 s in production) is scaled down with Shopify's answer time.
  const workers = startWorkers(services, { stopAllowanceMs: 1_000 });
  const until = Date.now() + 10_000;
  while (spent.length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(spent.length).toBe(1);

  // SIGTERM: the first renewal is under way.
  const spentWhenStopping = spent.length;
  await workers.stop();
  const spentWhenStopped = spent.length;
  // What server/app.ts's close() and main.ts's exit leave: the pairs stored by now.
  const stored = await db.session.findMany({ where: { shop: { in: SHOPS } }, select: { shop: true, accessToken: true } });
  const renewedAndStored = stored.filter((row) => !row.accessToken.startsWith("old-access-")).map((row) => row.shop);
  const spentButNotStored = spent.slice(0, spentWhenStopped).filter((shop) => !renewedAndStored.includes(shop));
  // Let the pass left running end before the database closes.
  afterwards = new Promise((resolve) => setTimeout(resolve, SHOPS.length * REFRESH_MS + 500));

  expect({
    refreshTokensSpentAfterStopBegan: spentWhenStopped - spentWhenStopping,
    shopsWhoseRefreshTokenWasSpentButNewPairNotStored: spentButNotStored,
  }).toEqual({ refreshTokensSpentAfterStopBegan: 0, shopsWhoseRefreshTokenWasSpentButNewPairNotStored: [] });
}, 20_000);

it("a renewal still under way when the workers' stop allowance runs out stores its pair before the stop returns", async () => {
  const shop = "renew-late.myshopify.com";
  await storeOfflinePair(shop);
  let spent = 0;
  // Shopify answers the grant after the allowance (300 ms here) has run out.
  const slowShopify: typeof fetch = async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    if (url !== `https://${shop}/admin/oauth/access_token` || init?.method !== "POST") return new Response("{}", { status: 404 });
    spent++;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return grantAnswer(shop);
  };
  const env = parseEnv({ NODE_ENV: "test", DATABASE_URL: "file:unused.db", LOG_LEVEL: "silent", OUTBOX_INTERVAL_MS: "1000", RECONCILE_INTERVAL_MS: "3600000" });
  const services = createServices(env, { db, sql, logger: createLogger({ level: "silent" }), fetch: slowShopify });
  const workers = startWorkers(services, { stopAllowanceMs: 300, renewalsWaitMs: 3_000 });
  const until = Date.now() + 10_000;
  while (spent === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(spent).toBe(1);
  await workers.stop();
  const row = await db.session.findUniqueOrThrow({ where: { id: offlineSessionId(shop) }, select: { accessToken: true } });
  afterwards = Promise.all([afterwards, new Promise((resolve) => setTimeout(resolve, 1_500))]);
  expect(row.accessToken).not.toBe(`old-access-${shop}`);
}, 20_000);
