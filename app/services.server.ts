// The composition root: builds every dependency of the use cases once per process from
// the validated environment. Routes receive it through Remix's load context; the server
// entry starts the background workers with the same object.
import { createLateWork } from "./lib/late-work";
import type { AppEnv } from "./config/env.server";
import type { RetryPolicy } from "./gateway/retry";
import { databaseKind } from "./db/database-url";
import { openConfiguredDatabase, type Database } from "./db/database.server";
import { plainSqlThroughClient, type PlainSql } from "./db/plain-sql.server";
import { createPrismaQuotaStore } from "./db/prisma-quota-store.server";
import { createLogger, type Logger } from "./lib/logger.server";
import { systemClock, type Clock } from "./payments/deps";
import { createReturnLinks } from "./payments/return-links";
import { createCredentialCipher } from "./shops/credential-cipher.server";
import { createGatewayDirectory } from "./shops/gateway-directory.server";
import { createRememberedShops } from "./shops/shop-rows.server";
import type { ShopsDeps } from "./shops/onboarding.server";
import { createShopifyDirectory } from "./shops/shopify-directory.server";

/** The background loops a request can wake. */
export type WakeKind = "outbox" | "inbox" | "readiness";

export interface AppServices extends ShopsDeps {
  env: AppEnv;
  /** Background workers subscribe to be woken when new work is stored. */
  subscribe(kind: WakeKind, wake: () => void): () => void;
}

export interface ServiceOverrides {
  /** Another client (a test's, the benchmark's timing wrapper); its plain SQL runs through it unless `sql` is given too. */
  db?: Database;
  sql?: PlainSql;
  clock?: Clock;
  logger?: Logger;
  fetch?: typeof fetch;
  /** The gateway clients' retry waits (a test that fails the gateway on purpose need not wait them out). */
  gatewayRetry?: Partial<RetryPolicy>;
}

export function createServices(env: AppEnv, overrides: ServiceOverrides = {}): AppServices {
  const { db, sql } = overrides.db
    ? { db: overrides.db, sql: overrides.sql ?? plainSqlThroughClient(overrides.db, databaseKind(env.DATABASE_URL)) }
    : openConfiguredDatabase(env);
  const logger = overrides.logger ?? createLogger({ level: env.LOG_LEVEL });
  const clock = overrides.clock ?? systemClock;
  const cipher = createCredentialCipher(env.CREDENTIALS_ENCRYPTION_KEYS);
  const gatewayBaseUrls = { live: env.GATEWAY_BASE_URL, sandbox: env.GATEWAY_SANDBOX_URL };
  // One budget per device, shared by this instance's every call (payments, reads, Connect's key check) and by the other instances.
  const quotaStore = createPrismaQuotaStore(db, sql, {
    generalPerMinute: env.GATEWAY_LIMIT_PER_MINUTE,
    generalPerDay: env.GATEWAY_LIMIT_PER_DAY,
    criticalPerMinute: env.GATEWAY_CRITICAL_LIMIT_PER_MINUTE,
    criticalPerDay: env.GATEWAY_CRITICAL_LIMIT_PER_DAY,
  });
  const listeners: Record<WakeKind, Set<() => void>> = { outbox: new Set(), inbox: new Set(), readiness: new Set() };
  const services: AppServices = {
    env,
    db,
    sql,
    logger,
    clock,
    cipher,
    appUrl: env.SHOPIFY_APP_URL,
    gatewayBaseUrls,
    quotaStore,
    ...(overrides.fetch ? { fetch: overrides.fetch } : {}),
    links: createReturnLinks(env.SHOPIFY_APP_URL, env.SHOPIFY_API_SECRET, env.SHOPIFY_API_SECRET_PREVIOUS),
    gateways: createGatewayDirectory({
      cipher,
      baseUrls: gatewayBaseUrls,
      quotaStore,
      logger,
      clock: () => clock.now(),
      ...(overrides.fetch ? { fetch: overrides.fetch } : {}),
      ...(overrides.gatewayRetry ? { retry: overrides.gatewayRetry } : {}),
    }),
    shops: createRememberedShops(),
    shopify: createShopifyDirectory({
      db,
      cipher,
      apiVersion: env.PAYMENTS_API_VERSION,
      apiKey: env.SHOPIFY_API_KEY,
      apiSecretKey: env.SHOPIFY_API_SECRET,
      appUrl: env.SHOPIFY_APP_URL,
      ...(env.SHOP_CUSTOM_DOMAIN ? { customShopDomains: [env.SHOP_CUSTOM_DOMAIN] } : {}),
      endpointTemplate: env.SHOPIFY_PAYMENTS_APPS_ENDPOINT,
      logger,
      ...(overrides.fetch ? { fetch: overrides.fetch } : {}),
    }),
    lateWork: createLateWork(),
    notify: {
      outbox: () => listeners.outbox.forEach((wake) => wake()),
      inbox: () => listeners.inbox.forEach((wake) => wake()),
      readiness: () => listeners.readiness.forEach((wake) => wake()),
    },
    subscribe(kind, wake) {
      listeners[kind].add(wake);
      return () => {
        listeners[kind].delete(wake);
      };
    },
  };
  return services;
}
