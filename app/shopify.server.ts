// The Shopify app: OAuth, embedded admin authentication, Shopify webhooks and the offline
// session storage (Prisma). Named exports follow Shopify's app template.
import "@shopify/shopify-app-remix/adapters/node";
import { ApiVersion, AppDistribution, shopifyApp } from "@shopify/shopify-app-remix/server";
import { PrismaSessionStorage } from "@shopify/shopify-app-session-storage-prisma";
import { env } from "./config/env.server";
import { appDatabase } from "./db.server";

const config = env();

const shopify = shopifyApp({
  apiKey: config.SHOPIFY_API_KEY,
  apiSecretKey: config.SHOPIFY_API_SECRET,
  apiVersion: ApiVersion.April26,
  scopes: config.SCOPES.split(",").map((s) => s.trim()).filter(Boolean),
  appUrl: config.SHOPIFY_APP_URL,
  authPathPrefix: "/auth",
  // The generated client has the models the storage needs; its type comes from another path.
  sessionStorage: new PrismaSessionStorage(appDatabase() as never),
  distribution: AppDistribution.AppStore,
  future: {
    unstable_newEmbeddedAuthStrategy: true,
    expiringOfflineAccessTokens: true,
  },
  ...(config.SHOP_CUSTOM_DOMAIN ? { customShopDomains: [config.SHOP_CUSTOM_DOMAIN] } : {}),
});

export default shopify;
export const apiVersion = ApiVersion.April26;
export const addDocumentResponseHeaders = shopify.addDocumentResponseHeaders;
export const authenticate = shopify.authenticate;
export const unauthenticated = shopify.unauthenticated;
export const login = shopify.login;
export const registerWebhooks = shopify.registerWebhooks;
export const sessionStorage = shopify.sessionStorage;
