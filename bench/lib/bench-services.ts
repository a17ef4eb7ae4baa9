// The app's composition root as the benchmarks need it: the product's own createServices,
// with the gateway directory rebuilt around a quota store whose limits can be raised.
// (createServices has no hook for quota limits; everything else is the product's own.)
import type { AppEnv } from "../../app/config/env.server";
import { createPrismaQuotaStore } from "../../app/db/prisma-quota-store.server";
import type { QuotaLimits } from "../../app/gateway/quota";
import { createServices, type AppServices, type ServiceOverrides } from "../../app/services.server";
import { createGatewayDirectory } from "../../app/shops/gateway-directory.server";

export function createBenchServices(env: AppEnv, overrides: ServiceOverrides, quotaLimits: Partial<QuotaLimits> | null): AppServices {
  const services = createServices(env, overrides);
  if (!quotaLimits) return services;
  const clock = services.clock;
  services.gateways = createGatewayDirectory({
    cipher: services.cipher,
    baseUrls: services.gatewayBaseUrls,
    quotaStore: createPrismaQuotaStore(services.db, env.DATABASE_URL, quotaLimits),
    logger: services.logger,
    clock: () => clock.now(),
    ...(overrides.fetch ? { fetch: overrides.fetch } : {}),
  });
  return services;
}

/** Limits so high that neither side ever throttles: the session benchmarks measure work, not waiting. */
export const UNTHROTTLED_QUOTA: QuotaLimits = { generalPerMinute: 1_000_000, generalPerDay: 10_000_000, criticalPerMinute: 1_000_000, criticalPerDay: 10_000_000 };
export const UNTHROTTLED_SANDBOX = { perMinute: 1_000_000, perDay: 10_000_000, criticalPerMinute: 1_000_000, criticalPerDay: 10_000_000 };
