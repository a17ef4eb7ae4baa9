// Payments Apps clients per shop, with the shop's offline access token from the session
// storage. The app asks for expiring offline tokens (an hour each, renewed with a refresh
// token), and the library renews them only inside its own request paths (authenticate.admin,
// unauthenticated.admin...), while the outbox calls Shopify from background workers long
// after the merchant left the admin. So the directory renews the token itself, with the
// library's refresh grant: before it runs out, and once more when Shopify refuses it (401).
// In local development the endpoint can point at the Shopify stand-in, and so does the
// refresh grant.
import { AsyncLocalStorage } from "node:async_hooks";
import "@shopify/shopify-api/adapters/node";
import { HttpResponseError, LogSeverity, shopifyApi, type ApiVersion, type Session } from "@shopify/shopify-api";
import { abstractFetch, setAbstractFetchFunc } from "@shopify/shopify-api/runtime";
import { err, type Result } from "neverthrow";
import { createPaymentsAppsClient, type PaymentsAppsClient, type PublicApiVersionsResult } from "~/shopify/payments-apps/client";
import type { PaymentsAppsError } from "~/shopify/payments-apps/errors";
import { settledWithin } from "~/lib/deadline";
import { silentLogger, type Logger } from "~/lib/logger.server";
import type { Database } from "~/db/database.server";
import type { ShopifyDirectory } from "~/payments/deps";
import type { CredentialCipher } from "./credential-cipher.server";
import { createSealedSessionStorage, rememberTokens, type ShopifySessionStorage } from "./shopify-sessions.server";

export interface ShopifyDirectoryOptions {
  db: Database;
  /** Seals and opens the tokens in the session storage, as the app's own storage does (app/shopify.server.ts). */
  cipher: CredentialCipher;
  apiVersion: string;
  /** The app's credentials and URL: the refresh grant is made in the app's name. */
  apiKey: string;
  apiSecretKey: string;
  appUrl: string;
  /** Shop domains besides *.myshopify.com, as the app is configured with (app/shopify.server.ts). */
  customShopDomains?: string[];
  /** A URL template with {shop} and {version}, for the local stand-in only. */
  endpointTemplate?: string | undefined;
  fetch?: typeof fetch;
  logger?: Logger;
  /** How long a refresh grant may take before it is given up (the outbox retries the delivery later). */
  refreshTimeoutMs?: number;
}

export function offlineSessionId(shopDomain: string): string {
  return `offline_${shopDomain}`;
}

/** The library renews a token this close to its expiry (ensureOfflineTokenIsNotExpired): the same margin here. */
const RENEW_WITHIN_MS = 5 * 60 * 1000;
/** A refresh grant Shopify does not answer within this long is given up: the outbox's pass waits for it. */
const REFRESH_TIMEOUT_MS = 20_000;

/** What a renewal gave: the session to use (null: none better), and whether Shopify could not be asked. */
interface Renewal {
  session: Session | null;
  unreachable: boolean;
}
const NOT_RENEWED: Renewal = { session: null, unreachable: false };

type LibraryFetch = typeof abstractFetch;

/**
 * The library sends its requests through one process-wide fetch. A refresh made by the
 * directory runs inside this context, so its token request goes through the directory's
 * fetch (and, in local development, to the stand-in instead of https://{shop}); every
 * other request of the library is left as it was.
 */
const libraryRequests = new AsyncLocalStorage<LibraryFetch>();
let outsideRefresh: LibraryFetch = abstractFetch;
const routedFetch: LibraryFetch = (input, init) => (libraryRequests.getStore() ?? outsideRefresh)(input, init);

function routeLibraryRequests(): void {
  if (abstractFetch === routedFetch) return;
  outsideRefresh = abstractFetch;
  setAbstractFetchFunc(routedFetch);
}

export function createShopifyDirectory(options: ShopifyDirectoryOptions): ShopifyDirectory {
  const logger = options.logger ?? silentLogger;
  const template = options.endpointTemplate ? decodeURI(options.endpointTemplate) : undefined;
  const appUrl = new URL(options.appUrl);
  const api = shopifyApi({
    apiKey: options.apiKey,
    apiSecretKey: options.apiSecretKey,
    hostName: appUrl.host,
    hostScheme: appUrl.protocol === "http:" ? "http" : "https",
    // The token endpoint is not versioned; the library wants a version all the same.
    apiVersion: options.apiVersion as ApiVersion,
    isEmbeddedApp: true,
    ...(options.customShopDomains ? { customShopDomains: options.customShopDomains } : {}),
    logger: {
      level: LogSeverity.Warning,
      httpRequests: false,
      log: (severity, message) => (severity === LogSeverity.Error ? logger.error("Shopify API library", { message }) : logger.warn("Shopify API library", { message })),
    },
  });
  // Opened on first use: the storage checks its table as soon as it exists.
  let storage: ShopifySessionStorage | null = null;
  const sessions = () => (storage ??= createSealedSessionStorage(options.db, options.cipher, logger));
  // One refresh per shop at a time: a refresh token is spent by its use, so workers that find
  // the token expired together wait for the same refresh instead of racing with the same refresh token.
  const renewals = new Map<string, Promise<Renewal>>();
  /**
   * Sessions renewed here that the storage failed to keep, by shop, with the token each
   * renewed. The refresh token they replaced is spent, so they are the only good pair: used
   * here, and stored at the next use, unless a newer pair was stored meanwhile.
   */
  const unsaved = new Map<string, { session: Session; replaces: string }>();

  /** Stores a renewed session; false (logged) when the storage failed. */
  async function keep(session: Session): Promise<boolean> {
    let failure: { error?: unknown } = {};
    try {
      if ((await sessions().storeSession(session)) !== false) return true;
    } catch (error) {
      failure = { error };
    }
    logger.error("Could not store the shop's renewed offline access token; it is used from memory and stored again at the next use", { shop: session.shop, ...failure });
    return false;
  }

  /**
   * The shop's offline session: the stored one, or one renewed here that the storage could not
   * keep yet (stored now if it can). Its tokens are known to the log scrubber either way: the
   * storage registers what it loads, and a renewal what it gets.
   */
  async function loadOffline(shopDomain: string): Promise<Session | undefined> {
    const stored = await sessions().loadSession(offlineSessionId(shopDomain));
    const pending = unsaved.get(shopDomain);
    if (!pending) return stored;
    // The merchant opened the app since (a new pair was stored): that one stands.
    if (stored?.accessToken !== pending.replaces) {
      unsaved.delete(shopDomain);
      return stored;
    }
    if (await keep(pending.session)) unsaved.delete(shopDomain);
    return pending.session;
  }

  /**
   * What the library's requests for a shop's refresh go through: the directory's fetch (aimed
   * at the stand-in when there is one, the library's own otherwise), given up after
   * refreshTimeoutMs.
   */
  function requestsFor(shopDomain: string): LibraryFetch {
    const shopBase = template && template.includes("/payments_apps/") ? template.slice(0, template.indexOf("/payments_apps/")).replace("{shop}", shopDomain) : null;
    const send: LibraryFetch = options.fetch ?? outsideRefresh;
    const shopUrl = `https://${shopDomain}/`;
    const timeoutMs = options.refreshTimeoutMs ?? REFRESH_TIMEOUT_MS;
    return (input, init) => {
      const timed = { ...init, signal: init?.signal ? AbortSignal.any([init.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs) };
      return shopBase && typeof input === "string" && input.startsWith(shopUrl) ? send(`${shopBase}/${input.slice(shopUrl.length)}`, timed) : send(input, timed);
    };
  }

  async function refresh(shopDomain: string, refreshToken: string): Promise<Session> {
    routeLibraryRequests();
    return (await libraryRequests.run(requestsFor(shopDomain), () => api.auth.refreshToken({ shop: shopDomain, refreshToken }))).session;
  }

  /**
   * Renews the shop's token unless that was done already: `spent` is the token the caller found
   * expired or Shopify refused. Resolves to the session to use now, or a null session when
   * there is nothing better than `spent` (no refresh token, or the refresh failed), `unreachable`
   * when that is because Shopify could not be asked (network, timeout, 5xx, 429).
   */
  function renewed(shopDomain: string, spent: string): Promise<Renewal> {
    const running = renewals.get(shopDomain);
    if (running) return running;
    const renewal = (async (): Promise<Renewal> => {
      const stored = await loadOffline(shopDomain);
      if (!stored?.accessToken) return NOT_RENEWED;
      // Renewed meanwhile (another worker, another instance, the admin): use that one.
      if (stored.accessToken !== spent) return { session: stored, unreachable: false };
      if (!stored.refreshToken) return NOT_RENEWED;
      let fresh: Session;
      try {
        fresh = rememberTokens(await refresh(shopDomain, stored.refreshToken));
      } catch (error) {
        // Another instance may have spent the refresh token first and stored what it got.
        const now = await loadOffline(shopDomain);
        if (now?.accessToken && now.accessToken !== spent) return { session: now, unreachable: false };
        logger.warn("Could not renew the shop's offline access token; the merchant must open the app again", {
          shop: shopDomain,
          ...(error instanceof HttpResponseError
            ? { status: error.response.code, error: (error.response.body as { error?: unknown } | undefined)?.error ?? null }
            : { error: error instanceof Error ? error.name : "unknown" }),
        });
        // Refused: the grant turned down (400, 401, 403) or the shop unknown (404). Any other
        // answer says nothing of the token: a frozen (402) or locked (423) shop, 429, 5xx.
        const refused = error instanceof HttpResponseError && [400, 401, 403, 404].includes(error.response.code);
        return { session: null, unreachable: !refused };
      }
      // The refresh token is spent now: a pair the storage fails to keep is kept here instead.
      if (!(await keep(fresh))) unsaved.set(shopDomain, { session: fresh, replaces: stored.accessToken });
      else unsaved.delete(shopDomain);
      logger.info("Renewed the shop's offline access token", { shop: shopDomain, expires: fresh.expires?.toISOString() ?? null });
      return { session: fresh, unreachable: false };
    })().finally(() => renewals.delete(shopDomain));
    renewals.set(shopDomain, renewal);
    return renewal;
  }

  function clientWith(shopDomain: string, accessToken: string): PaymentsAppsClient {
    const endpoint = template ? template.replace("{shop}", shopDomain).replace("{version}", options.apiVersion) : undefined;
    return createPaymentsAppsClient({
      shopDomain,
      accessToken,
      apiVersion: options.apiVersion,
      ...(endpoint ? { endpoint } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  /**
   * A client that, when Shopify refuses its token (401: expired early, or revoked), renews the
   * token and sends the call once more. At most one renewal per client: `tried` is the renewal
   * forShop already made (or failed to make), so a refresh Shopify refuses is not asked again
   * for every message of a pass.
   */
  function renewingClient(shopDomain: string, session: Session, tried: Renewal | null): PaymentsAppsClient {
    let token = session.accessToken!;
    let client = clientWith(shopDomain, token);
    type Renewed = { token: string | null; unreachable: boolean };
    let renewal: Promise<Renewed> | null = tried ? Promise.resolve({ token: null, unreachable: tried.unreachable }) : null;

    const renewedToken = (refused: string): Promise<Renewed> => {
      if (refused !== token) return Promise.resolve({ token, unreachable: false });
      renewal ??= renewed(shopDomain, refused).then(({ session: fresh, unreachable }) => {
        if (!fresh?.accessToken || fresh.accessToken === refused) return { token: null, unreachable };
        token = fresh.accessToken;
        client = clientWith(shopDomain, token);
        return { token, unreachable: false };
      });
      return renewal;
    };

    async function send<T>(call: (client: PaymentsAppsClient) => Promise<Result<T, PaymentsAppsError>>): Promise<Result<T, PaymentsAppsError>> {
      const used = token;
      const result = await call(client);
      // A 401 means Shopify did nothing with the call, so sending it again is safe; a 403 is about scopes, not the token.
      if (result.isOk() || result.error.kind !== "unauthorized" || result.error.status !== 401) return result;
      const fresh = await renewedToken(used);
      return fresh.token && fresh.token !== used ? call(client) : result;
    }

    /**
     * Whether Shopify takes the shop's token (see PaymentsAppsClient.publicApiVersions): a 401
     * stands only when the renewal was refused too. One whose renewal could not reach Shopify
     * says nothing of the token, and is answered as Shopify being unreachable.
     */
    async function publicApiVersions(): Promise<PublicApiVersionsResult> {
      const used = token;
      const result = await send((c) => c.publicApiVersions());
      if (result.isOk() || result.error.kind !== "unauthorized" || result.error.status !== 401 || !(await renewedToken(used)).unreachable) return result;
      return err({ kind: "network", retryable: true, operation: "PublicApiVersions", message: "Shopify refused the shop's access token, and its renewal could not reach Shopify" });
    }

    return {
      endpoint: client.endpoint,
      resolvePaymentSession: (gid) => send((c) => c.resolvePaymentSession(gid)),
      rejectPaymentSession: (gid, reason) => send((c) => c.rejectPaymentSession(gid, reason)),
      pendPaymentSession: (gid, pending) => send((c) => c.pendPaymentSession(gid, pending)),
      resolveRefundSession: (gid) => send((c) => c.resolveRefundSession(gid)),
      rejectRefundSession: (gid, reason) => send((c) => c.rejectRefundSession(gid, reason)),
      resolveCaptureSession: (gid) => send((c) => c.resolveCaptureSession(gid)),
      rejectCaptureSession: (gid, reason) => send((c) => c.rejectCaptureSession(gid, reason)),
      resolveVoidSession: (gid) => send((c) => c.resolveVoidSession(gid)),
      rejectVoidSession: (gid, reason) => send((c) => c.rejectVoidSession(gid, reason)),
      configurePaymentsApp: (configuration) => send((c) => c.configurePaymentsApp(configuration)),
      publicApiVersions,
    };
  }

  return {
    async renewalsUnderway(withinMs) {
      if (renewals.size > 0) await settledWithin(Promise.allSettled(renewals.values()), withinMs);
      return renewals.size;
    },
    async renewTokensRunningOut(now, cutoff, stopping) {
      const due = await options.db.session.findMany({
        where: { isOnline: false, refreshToken: { not: null }, refreshTokenExpires: { gt: now, lt: cutoff } },
        select: { shop: true },
        orderBy: { refreshTokenExpires: "asc" },
      });
      let count = 0;
      for (const { shop } of due) {
        if (stopping?.()) break;
        const stored = await loadOffline(shop);
        if (!stored?.accessToken || !stored.refreshToken) continue;
        const { session: fresh } = await renewed(shop, stored.accessToken);
        if (fresh?.accessToken && fresh.accessToken !== stored.accessToken) count++;
      }
      return count;
    },
    async forShop(shopDomain) {
      const stored = await loadOffline(shopDomain);
      if (!stored?.accessToken) return null;
      if (!(stored.refreshToken && stored.isExpired(RENEW_WITHIN_MS))) return renewingClient(shopDomain, stored, null);
      // Expired or about to: renew first. If that fails the stored token is tried anyway (it may
      // have minutes left), and Shopify's answer goes to the outbox as it is.
      const renewal = await renewed(shopDomain, stored.accessToken);
      return renewingClient(shopDomain, renewal.session?.accessToken ? renewal.session : stored, renewal);
    },
  };
}
