// Shopify after the merchant uninstalled the app, for tests about what an app/uninstalled or a
// shop/redact does to the rows once Shopify confirmed it: the stand-in with every token revoked
// (as Shopify does at an uninstall), asked through the real Payments Apps client, so every
// shop's token is refused (401) as it would be.
import { createPaymentsAppsClient } from "../../app/shopify/payments-apps/client";
import type { ShopifyDirectory } from "../../app/payments/deps";
import { startShopifyStandin } from "../../dev/shopify-standin/server";

export interface UninstalledShopify {
  directory: ShopifyDirectory;
  close(): Promise<void>;
}

export async function startUninstalledShopify(): Promise<UninstalledShopify> {
  const standin = await startShopifyStandin({ port: 0, host: "127.0.0.1", appUrl: "http://127.0.0.1:9" });
  standin.state.uninstallApp();
  return {
    directory: {
      // The stand-in plays one shop: each shop's question is asked as that shop's, and refused alike.
      forShop: async (shopDomain) => createPaymentsAppsClient({ shopDomain, accessToken: standin.accessToken, endpoint: standin.graphqlEndpoint() }),
    },
    close: () => standin.close(),
  };
}
