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
import { PrismaSessionStorage } from "@shopify/shopify-app-session-storage-prisma";
import { createPaymentsAppsClient, type PaymentsAppsClient, type PaymentsAppsResult } from "~/shopify/payments-apps/client";
import { registerSecret, silentLogger, type Logger } from "~/lib/logger.server";
import type { Database } from "~/db/database.server";
import type { ShopifyDirectory } from "~/payments/deps";

export interface ShopifyDirectoryOptions {
  db: Database;
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
}

export function offlineSessionId(shopDomain: string): string {
  return `offline_${shopDomain}`;
}

/** The library renews a token this close to its expiry (ensureOfflineTokenIsNotExpired): the same margin here. */
const RENEW_WITHIN_MS = 5 * 60 * 1000;

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
  let storage: PrismaSessionStorage<never> | null = null;
  const sessions = () => (storage ??= new PrismaSessionStorage(options.db as never));
  // One refresh per shop at a time: a refresh token is spent by its use, so workers that find
  // the token expired together wait for the same refresh instead of racing with the same refresh token.
  const renewals = new Map<string, Promise<Session | null>>();

  /** What the library's requests for a shop go through: the directory's fetch, aimed at the stand-in when there is one. */
  function requestsFor(shopDomain: string): LibraryFetch | null {
    const shopBase = template && template.includes("/payments_apps/") ? template.slice(0, template.indexOf("/payments_apps/")).replace("{shop}", shopDomain) : null;
    if (!shopBase && !options.fetch) return null;
    const send = options.fetch ?? globalThis.fetch;
    const shopUrl = `https://${shopDomain}/`;
    return (input, init) => (shopBase && typeof input === "string" && input.startsWith(shopUrl) ? send(`${shopBase}/${input.slice(shopUrl.length)}`, init) : send(input, init));
  }

  async function refresh(shopDomain: string, refreshToken: string): Promise<Session> {
    const requests = requestsFor(shopDomain);
    const grant = () => api.auth.refreshToken({ shop: shopDomain, refreshToken });
    if (!requests) return (await grant()).session;
    routeLibraryRequests();
    return (await libraryRequests.run(requests, grant)).session;
  }

  /**
   * Renews the shop's token unless that was done already: `spent` is the token the caller found
   * expired or Shopify refused. Resolves to the session to use now, or null when there is
   * nothing better than `spent` (no refresh token, or Shopify refused the refresh).
   */
  function renewed(shopDomain: string, spent: string): Promise<Session | null> {
    const running = renewals.get(shopDomain);
    if (running) return running;
    const renewal = (async (): Promise<Session | null> => {
      const stored = await sessions().loadSession(offlineSessionId(shopDomain));
      if (!stored?.accessToken) return null;
      // Renewed meanwhile (another worker, another instance, the admin): use that one.
      if (stored.accessToken !== spent) return remembered(stored);
      if (!stored.refreshToken) return null;
      registerSecret(stored.refreshToken);
      try {
        const fresh = await refresh(shopDomain, stored.refreshToken);
        remembered(fresh);
        await sessions().storeSession(fresh);
        logger.info("Renewed the shop's offline access token", { shop: shopDomain, expires: fresh.expires?.toISOString() ?? null });
        return fresh;
      } catch (error) {
        // Another instance may have spent the refresh token first and stored what it got.
        const now = await sessions().loadSession(offlineSessionId(shopDomain));
        if (now?.accessToken && now.accessToken !== spent) return remembered(now);
        logger.warn("Could not renew the shop's offline access token; the merchant must open the app again", {
          shop: shopDomain,
          ...(error instanceof HttpResponseError
            ? { status: error.response.code, error: (error.response.body as { error?: unknown } | undefined)?.error ?? null }
            : { error: error instanceof Error ? error.name : "unknown" }),
        });
        return null;
      }
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
   * token and sends the call once more. At most one renewal per client: `tried` is set when
   * forShop already renewed (or failed to), so a refresh Shopify refuses is not asked again
   * for every message of a pass.
   */
  function renewingClient(shopDomain: string, session: Session, tried: boolean): PaymentsAppsClient {
    let token = session.accessToken!;
    let client = clientWith(shopDomain, token);
    let renewal: Promise<string | null> | null = tried ? Promise.resolve(null) : null;

    const renewedToken = (refused: string): Promise<string | null> => {
      if (refused !== token) return Promise.resolve(token);
      renewal ??= renewed(shopDomain, refused).then((fresh) => {
        if (!fresh?.accessToken || fresh.accessToken === refused) return null;
        token = fresh.accessToken;
        client = clientWith(shopDomain, token);
        return token;
      });
      return renewal;
    };

    async function send(call: (client: PaymentsAppsClient) => Promise<PaymentsAppsResult>): Promise<PaymentsAppsResult> {
      const used = token;
      const result = await call(client);
      // A 401 means Shopify did nothing with the call, so sending it again is safe; a 403 is about scopes, not the token.
      if (result.isOk() || result.error.kind !== "unauthorized" || result.error.status !== 401) return result;
      const fresh = await renewedToken(used);
      return fresh && fresh !== used ? call(client) : result;
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
    };
  }

  return {
    async forShop(shopDomain) {
      const stored = await sessions().loadSession(offlineSessionId(shopDomain));
      if (!stored?.accessToken) return null;
      remembered(stored);
      if (!(stored.refreshToken && stored.isExpired(RENEW_WITHIN_MS))) return renewingClient(shopDomain, stored, false);
      // Expired or about to: renew first. If that fails the stored token is tried anyway (it may
      // have minutes left), and Shopify's answer goes to the outbox as it is.
      const fresh = await renewed(shopDomain, stored.accessToken);
      return renewingClient(shopDomain, fresh?.accessToken ? fresh : stored, true);
    },
  };
}

/** Registers the session's secrets with the logger's scrubber, and hands the session back. */
function remembered(session: Session): Session {
  registerSecret(session.accessToken);
  registerSecret(session.refreshToken);
  return session;
}
