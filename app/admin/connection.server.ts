// What the connection page shows of a shop's gateway setup: which environments have a
// device (by the key's last four characters only), the notification URL to paste in the
// gateway dashboard, and whether Shopify may offer the payment method.
import type { GatewayEnv } from "~/payments/deps";
import { maskSecret } from "~/shops/credential-cipher.server";
import { notificationUrl } from "~/shops/onboarding.server";
import { isShopReady } from "~/shops/shop-credentials.server";
import type { Shop } from "../../generated/prisma/sqlite/client";

export interface EnvironmentConnection {
  env: GatewayEnv;
  label: string;
  connected: boolean;
  maskedKey: string | null;
}

export interface ConnectionView {
  shopDomain: string;
  notificationUrl: string;
  live: EnvironmentConnection;
  sandbox: EnvironmentConnection;
  testMode: boolean;
  ready: boolean;
  anyConnected: boolean;
}

export function environmentConnection(shop: Shop, env: GatewayEnv): EnvironmentConnection {
  const sealed = env === "live" ? shop.liveDeviceKeyEnc : shop.sandboxDeviceKeyEnc;
  const hint = env === "live" ? shop.liveDeviceKeyHint : shop.sandboxDeviceKeyHint;
  return {
    env,
    label: env === "live" ? "Live gateway" : "Gateway sandbox (test mode)",
    connected: sealed !== null,
    maskedKey: sealed !== null ? maskSecret(hint ?? "") : null,
  };
}

export function hasAnyCredentials(shop: Shop): boolean {
  return shop.liveDeviceKeyEnc !== null || shop.sandboxDeviceKeyEnc !== null;
}

export function connectionView(shop: Shop, appUrl: string): ConnectionView {
  return {
    shopDomain: shop.shopDomain,
    notificationUrl: notificationUrl(appUrl, shop),
    live: environmentConnection(shop, "live"),
    sandbox: environmentConnection(shop, "sandbox"),
    testMode: shop.testMode,
    ready: isShopReady(shop),
    anyConnected: hasAnyCredentials(shop),
  };
}
