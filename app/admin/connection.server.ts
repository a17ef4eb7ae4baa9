// What the connection page shows of a shop's gateway setup: which environments have a
// device (by the key's last four characters only), the notification URL to paste in the
// gateway dashboard, whether another shop uses the same device, and whether Shopify may offer
// the payment method.
import type { Database } from "~/db/database.server";
import type { GatewayDirectory, GatewayEnv } from "~/payments/deps";
import { PAYMENTS_IN_PROGRESS, watchedRejectedPayments } from "~/payments/payment-state";
import { maskSecret } from "~/shops/credential-cipher.server";
import { paymentsOnCurrentCredentials } from "~/shops/credential-columns";
import { readyToTakePayments, shopGateway } from "~/shops/gateway-directory.server";
import { notificationUrl } from "~/shops/onboarding.server";
import type { Shop } from "../../generated/prisma/sqlite/client";

export interface EnvironmentConnection {
  env: GatewayEnv;
  label: string;
  connected: boolean;
  /** Connected, but stored under an encryption key the app no longer holds: every call fails until the device is connected again. */
  unreadable: boolean;
  maskedKey: string | null;
  /** Credentials removed while payments on them were in progress, kept only to finish those (deleted once they end). */
  retired: boolean;
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

export function environmentConnection(shop: Shop, env: GatewayEnv, gateways: GatewayDirectory): EnvironmentConnection {
  const sealed = env === "live" ? shop.liveDeviceKeyEnc : shop.sandboxDeviceKeyEnc;
  const hint = env === "live" ? shop.liveDeviceKeyHint : shop.sandboxDeviceKeyHint;
  return {
    env,
    label: env === "live" ? "Live gateway" : "Gateway sandbox (test mode)",
    connected: sealed !== null,
    unreadable: shopGateway(gateways, shop, env).state === "unreadable",
    maskedKey: sealed !== null ? maskSecret(hint ?? "") : null,
    retired: (env === "live" ? shop.liveRetiredDeviceKeyEnc : shop.sandboxRetiredDeviceKeyEnc) !== null,
  };
}

export function hasAnyCredentials(shop: Shop): boolean {
  return shop.liveDeviceKeyEnc !== null || shop.sandboxDeviceKeyEnc !== null;
}

export function connectionView(shop: Shop, appUrl: string, gateways: GatewayDirectory): ConnectionView {
  const live = environmentConnection(shop, "live", gateways);
  const sandbox = environmentConnection(shop, "sandbox", gateways);
  return {
    shopDomain: shop.shopDomain,
    notificationUrl: notificationUrl(appUrl, shop),
    live,
    sandbox,
    testMode: shop.testMode,
    // What Shopify is told: credentials of the shop's mode stored, and readable.
    ready: readyToTakePayments(gateways, shop),
    anyConnected: hasAnyCredentials(shop),
  };
}

/**
 * For each environment, whether another installed shop of this app has the device this shop uses
 * connected in the same environment (the same device key, by its deviceKeyHash). The gateway
 * sends a device's notifications to the one notification URL set on it, so only one of the shops
 * receives them: the merchant is told. Only yes or no: nothing of the other shop leaves this
 * function. This shop's digest is made from its key as it reads now; the other shops' are those
 * their rows hold (recordDeviceKeyHashes writes the ones saved before digests were kept).
 */
export async function devicesUsedByAnotherShop(db: Database, gateways: GatewayDirectory, shop: Shop): Promise<Record<GatewayEnv, boolean>> {
  const usedElsewhere = async (env: GatewayEnv): Promise<boolean> => {
    const gateway = shopGateway(gateways, shop, env);
    if (gateway.state !== "connected") return false;
    const hash = gateway.access.deviceKeyHash;
    const sameDevice = env === "live" ? { liveDeviceKeyHash: hash, liveDeviceKeyEnc: { not: null } } : { sandboxDeviceKeyHash: hash, sandboxDeviceKeyEnc: { not: null } };
    return (await db.shop.findFirst({ where: { id: { not: shop.id }, uninstalledAt: null, ...sameDevice }, select: { id: true } })) !== null;
  };
  const [live, sandbox] = await Promise.all([usedElsewhere("live"), usedElsewhere("sandbox")]);
  return { live, sandbox };
}

/** An environment's payments that still need its credentials, in two kinds the merchant is told apart. */
export interface FollowedPayments {
  /** Not finished at the gateway, or settled from a notification a read is still to check. */
  inProgress: number;
  /** Rejected, and their orders still read for crypto sent late (for a week after they began). */
  watched: number;
}

/**
 * Payments begun on each environment's credentials in use that still need them. Removing the
 * credentials keeps them for those payments alone (removeGatewayCredentials), so the
 * confirmation names how many; payments begun on credentials retired before keep those, and
 * are not counted.
 */
export async function paymentsFollowed(db: Database, shop: Shop, now: Date): Promise<Record<GatewayEnv, FollowedPayments>> {
  const count = (env: GatewayEnv, where: typeof PAYMENTS_IN_PROGRESS | ReturnType<typeof watchedRejectedPayments>) =>
    db.payment.count({ where: { shopId: shop.id, gatewayEnv: env, AND: [paymentsOnCurrentCredentials(shop, env), where] } });
  const of = async (env: GatewayEnv) => {
    const [inProgress, watched] = await Promise.all([count(env, PAYMENTS_IN_PROGRESS), count(env, watchedRejectedPayments(now))]);
    return { inProgress, watched };
  };
  const [live, sandbox] = await Promise.all([of("live"), of("sandbox")]);
  return { live, sandbox };
}
