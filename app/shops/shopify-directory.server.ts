// Payments Apps clients per shop, with the shop's offline access token from the session
// storage. In local development the endpoint can point at the Shopify stand-in.
import { createPaymentsAppsClient } from "~/shopify/payments-apps/client";
import { registerSecret } from "~/lib/logger.server";
import type { Database } from "~/db/database.server";
import type { ShopifyDirectory } from "~/payments/deps";

export interface ShopifyDirectoryOptions {
  db: Database;
  apiVersion: string;
  /** A URL template with {shop} and {version}, for the local stand-in only. */
  endpointTemplate?: string | undefined;
  fetch?: typeof fetch;
}

export function offlineSessionId(shopDomain: string): string {
  return `offline_${shopDomain}`;
}

export function createShopifyDirectory(options: ShopifyDirectoryOptions): ShopifyDirectory {
  return {
    async forShop(shopDomain) {
      const session = await options.db.session.findUnique({ where: { id: offlineSessionId(shopDomain) }, select: { accessToken: true } });
      if (!session?.accessToken) return null;
      registerSecret(session.accessToken);
      const endpoint = options.endpointTemplate
        ? decodeURI(options.endpointTemplate).replace("{shop}", shopDomain).replace("{version}", options.apiVersion)
        : undefined;
      return createPaymentsAppsClient({
        shopDomain,
        accessToken: session.accessToken,
        apiVersion: options.apiVersion,
        ...(endpoint ? { endpoint } : {}),
        ...(options.fetch ? { fetch: options.fetch } : {}),
      });
    },
  };
}
