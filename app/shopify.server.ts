// The Shopify app: OAuth, embedded admin authentication, Shopify webhooks and the offline
// session storage (Prisma, with the tokens sealed). Named exports follow Shopify's app template.
import "@shopify/shopify-app-remix/adapters/node";
import { ApiVersion, AppDistribution, LogSeverity, shopifyApp } from "@shopify/shopify-app-remix/server";
import { env } from "./config/env.server";
import { appDatabase } from "./db.server";
import { createLogger } from "./lib/logger.server";
import { createCredentialCipher } from "./shops/credential-cipher.server";
import { recordInstall, recordInstalledAsOf } from "./shops/shop-credentials.server";
import { createSealedSessionStorage } from "./shops/shopify-sessions.server";

const config = env();
const db = appDatabase();
const logger = createLogger({ level: config.LOG_LEVEL });

/** The Shopify library's own log lines, as the app's: JSON, leveled, with secrets redacted. */
function libraryLog(severity: LogSeverity, message: string): void {
  const write = severity === LogSeverity.Error ? logger.error : severity === LogSeverity.Warning ? logger.warn : severity === LogSeverity.Info ? logger.info : logger.debug;
  // The library prefixes its own "[shopify-api/INFO] ": the level is the record's.
  write("Shopify library", { message: message.replace(/^\[shopify-[a-z-]+\/[A-Z]+\] /, "") });
}

const shopify = shopifyApp({
  apiKey: config.SHOPIFY_API_KEY,
  apiSecretKey: config.SHOPIFY_API_SECRET,
  apiVersion: ApiVersion.April26,
  scopes: config.SCOPES.split(",").map((s) => s.trim()).filter(Boolean),
  appUrl: config.SHOPIFY_APP_URL,
  authPathPrefix: "/auth",
  sessionStorage: createSealedSessionStorage(db, createCredentialCipher(config.CREDENTIALS_ENCRYPTION_KEYS), logger),
  logger: { log: libraryLog },
  distribution: AppDistribution.AppStore,
  hooks: {
    // Shopify issued a new offline token (token exchange, or OAuth): the app is installed as of
    // now, so an uninstall triggered before it (a retried app/uninstalled) is ignored. Not run
    // for a renewal with the refresh token.
    afterAuth: async ({ session }) => {
      await recordInstall(db, session.shop, new Date());
    },
  },
  future: {
    unstable_newEmbeddedAuthStrategy: true,
    expiringOfflineAccessTokens: true,
  },
  ...(config.SHOP_CUSTOM_DOMAIN ? { customShopDomains: [config.SHOP_CUSTOM_DOMAIN] } : {}),
});

/**
 * The embedded admin's authentication, which also records the install the session token
 * proves (recordInstalledAsOf). A merchant who installs the app again while the offline token
 * stored before the uninstall has not run out gets no token exchange, since the library reuses
 * the stored token, and so no afterAuth: the session tokens of the new install are then the
 * only sign of it before a late app/uninstalled arrives.
 */
const authenticateAdmin: typeof shopify.authenticate.admin = async (request) => {
  const context = await shopify.authenticate.admin(request);
  if ("sessionToken" in context) await recordInstalledAsOf(db, context.session.shop, new Date(context.sessionToken.iat * 1000));
  return context;
};

export default shopify;
export const apiVersion = ApiVersion.April26;
export const addDocumentResponseHeaders = shopify.addDocumentResponseHeaders;
export const authenticate = { ...shopify.authenticate, admin: authenticateAdmin };
export const unauthenticated = shopify.unauthenticated;
export const login = shopify.login;
export const registerWebhooks = shopify.registerWebhooks;
export const sessionStorage = shopify.sessionStorage;
