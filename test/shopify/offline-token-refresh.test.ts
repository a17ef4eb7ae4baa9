// Expiring offline access tokens: the outbox calls Shopify long after the merchant last opened
// the admin, so the app renews the shop's token itself (the library's refresh grant, against
// the stand-in's token endpoint), stores the new pair, and refreshes once however many
// deliveries need the token at the same moment. The stand-in refuses expired tokens (401)
// and takes each refresh token once, as a careless second refresh would find out.
import { expect, it } from "vitest";
import { deliverDueMessages, deliverNow, enqueue } from "../../app/payments/outbox";
import type { Database } from "../../app/db/database.server";
import { createShopifyDirectory, offlineSessionId } from "../../app/shops/shopify-directory.server";
import { sessionTokenContext } from "../../app/shops/shopify-sessions.server";
import type { IssuedToken } from "../../dev/shopify-standin/tokens";
import { stackForFile } from "../support/stack";

const logLines: string[] = [];
const stack = stackForFile({ workers: false, logLines });

const db = () => stack().services.db;
const standin = () => stack().standin.state;
const sessionId = () => offlineSessionId(stack().shopDomain);
const seen: string[] = [];

/**
 * The shop now holds an expiring token (as after token exchange) whose hour is over; `known` says
 * whether the app's record shows it. Written in clear, as releases before tokens were sealed
 * stored them: such a pair is still read.
 */
async function expiredToken(known: "expired on record" | "valid on record"): Promise<IssuedToken> {
  const issued = standin().issueExpiringToken({ clientId: stack().env.SHOPIFY_API_KEY, clientSecret: stack().env.SHOPIFY_API_SECRET });
  seen.push(issued.accessToken, issued.refreshToken);
  await db().session.update({
    where: { id: sessionId() },
    data: {
      accessToken: issued.accessToken,
      refreshToken: issued.refreshToken,
      refreshTokenExpires: new Date(issued.refreshTokenExpiresAt),
      expires: known === "expired on record" ? new Date(Date.now() - 60_000) : new Date(issued.expiresAt),
    },
  });
  standin().expireAccessTokens();
  return issued;
}

/** A Shopify payment session whose resolve waits in the outbox (the payment itself is not what is tested here). */
async function resolveWaiting() {
  const session = standin().createPaymentSession({ test: true });
  const now = new Date();
  const message = await db().$transaction((tx) =>
    enqueue(tx, { shopDomain: stack().shopDomain, dedupeKey: `token:${session.id}:resolve`, payload: { kind: "payment.resolve", gid: session.gid }, now }),
  );
  return { session, message };
}

const resolveCalls = (shopifySessionId: string) =>
  standin()
    .operationsFor(shopifySessionId)
    .filter((op) => op.operationName === "PaymentSessionResolve")
    .map((op) => op.status);

function grantsSince(before: number) {
  return standin().tokenGrants().slice(before);
}

/** Since `grantsBefore`, exactly one refresh grant was made, it succeeded, and the pair it issued is stored. */
async function expectOneRefreshStored(grantsBefore: number) {
  const refreshes = grantsSince(grantsBefore);
  expect(refreshes.map((g) => g.status)).toEqual([200]);
  await expectStoredToken(refreshes[0]!.issued!);
}

/** The stored pair, opened: both tokens are kept sealed, bound to the session. */
async function storedTokens() {
  const stored = await db().session.findUniqueOrThrow({ where: { id: sessionId() } });
  const cipher = stack().services.cipher;
  return {
    stored,
    accessToken: cipher.decrypt(stored.accessToken, sessionTokenContext(sessionId(), "access-token")),
    refreshToken: cipher.decrypt(stored.refreshToken!, sessionTokenContext(sessionId(), "refresh-token")),
  };
}

async function expectStoredToken(issued: { accessToken: string; refreshToken: string }) {
  const { stored, accessToken, refreshToken } = await storedTokens();
  expect({ accessToken, refreshToken }).toEqual({ accessToken: issued.accessToken, refreshToken: issued.refreshToken });
  expect(stored.accessToken).not.toContain(issued.accessToken);
  expect(stored.refreshToken).not.toContain(issued.refreshToken);
  expect(stored.expires!.getTime()).toBeGreaterThan(Date.now() + 50 * 60_000);
  seen.push(issued.accessToken, issued.refreshToken);
}

it("an outbox delivery with an expired offline token is delivered after a refresh, and the new token is stored", async () => {
  const { session, message } = await resolveWaiting();
  const grants = standin().tokenGrants().length;
  const old = await expiredToken("expired on record");

  const counts = await deliverDueMessages(stack().services, { worker: "token-test" });

  expect(counts.done).toBe(1);
  expect((await db().outboxMessage.findUniqueOrThrow({ where: { id: message.id } })).status).toBe("done");
  expect(standin().session(session.id)?.state.code).toBe("RESOLVED");
  // Renewed before the call: Shopify never saw the expired token.
  expect(resolveCalls(session.id)).toEqual([200]);
  const refreshes = grantsSince(grants);
  expect(refreshes.map((g) => [g.grantType, g.status])).toEqual([["refresh_token", 200]]);
  expect(refreshes[0]!.issued!.accessToken).not.toBe(old.accessToken);
  await expectStoredToken(refreshes[0]!.issued!);
});

it("two deliveries at once that find the token expired refresh it once", async () => {
  const first = await resolveWaiting();
  const second = await resolveWaiting();
  const grants = standin().tokenGrants().length;
  await expiredToken("expired on record");

  const results = await Promise.all([deliverNow(stack().services, first.message.id), deliverNow(stack().services, second.message.id)]);

  expect(results).toEqual(["done", "done"]);
  expect(resolveCalls(first.session.id)).toEqual([200]);
  expect(resolveCalls(second.session.id)).toEqual([200]);
  // A second refresh would have spent the used refresh token (invalid_grant) or revoked the first one's token.
  await expectOneRefreshStored(grants);
});

it("a token Shopify refuses before its recorded expiry (401) is refreshed once and the call sent once more", async () => {
  const { session, message } = await resolveWaiting();
  const grants = standin().tokenGrants().length;
  await expiredToken("valid on record");

  expect(await deliverNow(stack().services, message.id)).toBe("done");

  expect(resolveCalls(session.id)).toEqual([401, 200]);
  expect(standin().session(session.id)?.state.code).toBe("RESOLVED");
  await expectOneRefreshStored(grants);
});

it("a refresh Shopify refuses leaves the delivery to the outbox's retries, after one attempt", async () => {
  const { session, message } = await resolveWaiting();
  const issued = await expiredToken("expired on record");
  // The shop got another token elsewhere (the admin's token exchange): this pair is revoked.
  const elsewhere = standin().issueExpiringToken({ clientId: stack().env.SHOPIFY_API_KEY, clientSecret: stack().env.SHOPIFY_API_SECRET });
  seen.push(elsewhere.accessToken, elsewhere.refreshToken);
  const grants = standin().tokenGrants().length;

  expect(await deliverNow(stack().services, message.id)).toBe("retry");

  expect(grantsSince(grants).map((g) => [g.status, g.error])).toEqual([[400, "invalid_grant"]]);
  expect(resolveCalls(session.id)).toEqual([401]);
  const retried = await db().outboxMessage.findUniqueOrThrow({ where: { id: message.id } });
  expect(retried.status).toBe("pending");
  expect(retried.lastError).toMatch(/access token/);
  const stored = await db().session.findUniqueOrThrow({ where: { id: sessionId() } });
  expect(stored.accessToken).toBe(issued.accessToken);
});

/** The app's services with a Shopify directory of their own, on `db` and with `options`. */
function servicesWithDirectory(options: { db?: Database; fetch?: typeof fetch; refreshTimeoutMs?: number }) {
  const { env, db: stackDb, logger } = stack().services;
  const shopify = createShopifyDirectory({
    db: options.db ?? stackDb,
    cipher: stack().services.cipher,
    apiVersion: env.PAYMENTS_API_VERSION,
    apiKey: env.SHOPIFY_API_KEY,
    apiSecretKey: env.SHOPIFY_API_SECRET,
    appUrl: env.SHOPIFY_APP_URL,
    endpointTemplate: env.SHOPIFY_PAYMENTS_APPS_ENDPOINT,
    logger,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.refreshTimeoutMs ? { refreshTimeoutMs: options.refreshTimeoutMs } : {}),
  });
  return { ...stack().services, shopify };
}

it("a renewed token the session storage fails to keep is used all the same, and stored at the next use", async () => {
  const first = await resolveWaiting();
  const second = await resolveWaiting();
  const old = await expiredToken("expired on record");
  const grants = standin().tokenGrants().length;
  // The session table refuses the first write (a database hiccup).
  let refusals = 1;
  const sessionTable = new Proxy(db().session, {
    get: (table, field, receiver) =>
      field === "upsert" && refusals > 0
        ? () => {
            refusals--;
            return Promise.reject(new Error("database is locked"));
          }
        : Reflect.get(table, field, receiver),
  });
  const flaky = new Proxy(db(), { get: (client, field, receiver) => (field === "session" ? sessionTable : Reflect.get(client, field, receiver)) });
  const services = servicesWithDirectory({ db: flaky as Database });

  expect(await deliverNow(services, first.message.id)).toBe("done");
  expect(resolveCalls(first.session.id)).toEqual([200]);
  // Not stored yet: the pair it replaced is spent, and only this directory holds the new one.
  expect((await db().session.findUniqueOrThrow({ where: { id: sessionId() } })).accessToken).toBe(old.accessToken);

  expect(await deliverNow(services, second.message.id)).toBe("done");
  expect(resolveCalls(second.session.id)).toEqual([200]);
  await expectOneRefreshStored(grants);
});

it("a refresh grant Shopify does not answer is given up, and the delivery left to the outbox's retries", async () => {
  const { session, message } = await resolveWaiting();
  await expiredToken("expired on record");
  const silent: typeof fetch = (input, init) =>
    String(input).includes("/oauth/access_token")
      ? new Promise<Response>((_, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal!.reason)))
      : fetch(input, init);
  // Without a time limit the delivery would wait for ever (and the test time out).
  expect(await deliverNow(servicesWithDirectory({ fetch: silent, refreshTimeoutMs: 300 }), message.id)).toBe("retry");
  expect(resolveCalls(session.id)).toEqual([401]);
});

it("asking whether Shopify takes the token: a renewal that cannot reach Shopify says nothing of the token (a retryable network error, not the 401)", async () => {
  await expiredToken("expired on record");
  const silent: typeof fetch = (input, init) =>
    String(input).includes("/oauth/access_token")
      ? new Promise<Response>((_, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal!.reason)))
      : fetch(input, init);
  const client = await servicesWithDirectory({ fetch: silent, refreshTimeoutMs: 300 }).shopify.forShop(stack().shopDomain);
  const answer = await client!.publicApiVersions();
  expect(answer.isErr() && answer.error).toMatchObject({ kind: "network", retryable: true, operation: "PublicApiVersions" });
});

it.each([402, 423])("asking whether Shopify takes the token: a renewal answered %i (a frozen or locked shop) says nothing of the token either", async (status) => {
  await expiredToken("expired on record");
  const closed: typeof fetch = (input, init) =>
    String(input).includes("/oauth/access_token")
      ? Promise.resolve(new Response(JSON.stringify({ errors: status === 402 ? "Unavailable Shop" : "Locked" }), { status, headers: { "content-type": "application/json" } }))
      : fetch(input, init);
  const client = await servicesWithDirectory({ fetch: closed }).shopify.forShop(stack().shopDomain);
  const answer = await client!.publicApiVersions();
  expect(answer.isErr() && answer.error).toMatchObject({ kind: "network", retryable: true, operation: "PublicApiVersions" });
});

it("asking whether Shopify takes the token: a refused token is renewed and asked again; after the uninstall both the token and its renewal are refused (401)", async () => {
  const grants = standin().tokenGrants().length;
  await expiredToken("valid on record");
  const installed = await (await servicesWithDirectory({}).shopify.forShop(stack().shopDomain))!.publicApiVersions();
  expect(installed.isOk()).toBe(true);
  await expectOneRefreshStored(grants);

  // The merchant uninstalls: Shopify revokes the app's tokens (the stand-in's tokens stay so for the rest of this file).
  await expiredToken("valid on record");
  standin().uninstallApp();
  const before = standin().tokenGrants().length;
  const uninstalled = await (await servicesWithDirectory({}).shopify.forShop(stack().shopDomain))!.publicApiVersions();
  expect(uninstalled.isErr() && uninstalled.error).toMatchObject({ kind: "unauthorized", status: 401, operation: "PublicApiVersions" });
  expect(grantsSince(before).map((g) => [g.status, g.error])).toEqual([[400, "invalid_grant"]]);
});

it("no access token or refresh token reaches the log", () => {
  expect(seen.length).toBeGreaterThan(0);
  expect(logLines.length).toBeGreaterThan(0);
  const leaks = logLines.filter((line) => seen.some((secret) => line.includes(secret)));
  expect(leaks).toEqual([]);
});
