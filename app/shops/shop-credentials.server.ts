// A shop's record and its gateway credentials: created on first use with an unguessable
// notification-URL token; credentials are sealed with the credential cipher and bound to
// the shop, environment and field they belong to.
import { randomBytes } from "node:crypto";
import type { Database } from "~/db/database.server";
import type { GatewayEnv } from "~/payments/deps";
import type { Shop } from "../../generated/prisma/sqlite/client";
import type { CredentialCipher } from "./credential-cipher.server";

export function credentialContext(shopId: string, env: GatewayEnv, field: "device-key" | "secret-key"): string {
  return `${shopId}:${env}:${field}`;
}

export function newWebhookToken(): string {
  return randomBytes(24).toString("base64url");
}

export async function ensureShop(db: Database, shopDomain: string): Promise<Shop> {
  const existing = await db.shop.findUnique({ where: { shopDomain } });
  if (existing) {
    if (!existing.uninstalledAt) return existing;
    return db.shop.update({ where: { id: existing.id }, data: { uninstalledAt: null } });
  }
  return db.shop.upsert({ where: { shopDomain }, create: { shopDomain, webhookToken: newWebhookToken() }, update: {} });
}

export async function storeCredentials(
  db: Database,
  cipher: CredentialCipher,
  shop: Shop,
  env: GatewayEnv,
  credentials: { deviceKey: string; secretKeyHex: string },
): Promise<Shop> {
  const deviceKeyEnc = cipher.encrypt(credentials.deviceKey, credentialContext(shop.id, env, "device-key"));
  const secretKeyEnc = cipher.encrypt(credentials.secretKeyHex, credentialContext(shop.id, env, "secret-key"));
  const hint = credentials.deviceKey.slice(-4);
  return db.shop.update({
    where: { id: shop.id },
    data:
      env === "live"
        ? { liveDeviceKeyEnc: deviceKeyEnc, liveSecretKeyEnc: secretKeyEnc, liveDeviceKeyHint: hint }
        : { sandboxDeviceKeyEnc: deviceKeyEnc, sandboxSecretKeyEnc: secretKeyEnc, sandboxDeviceKeyHint: hint },
  });
}

export async function clearCredentials(db: Database, shop: Shop, env: GatewayEnv | "all"): Promise<Shop> {
  const live = { liveDeviceKeyEnc: null, liveSecretKeyEnc: null, liveDeviceKeyHint: null };
  const sandbox = { sandboxDeviceKeyEnc: null, sandboxSecretKeyEnc: null, sandboxDeviceKeyHint: null };
  return db.shop.update({ where: { id: shop.id }, data: env === "live" ? live : env === "sandbox" ? sandbox : { ...live, ...sandbox } });
}

/** Shopify may offer the payment method once the shop can take payments in its current mode. */
export function isShopReady(shop: Shop): boolean {
  return shop.testMode ? shop.sandboxDeviceKeyEnc !== null : shop.liveDeviceKeyEnc !== null;
}

/** Re-seals every credential with the current key (after a key rotation). Returns how many shops changed. */
export async function rotateCredentialEncryption(db: Database, cipher: CredentialCipher): Promise<number> {
  let changed = 0;
  for (const shop of await db.shop.findMany()) {
    const data: Partial<Record<"liveDeviceKeyEnc" | "liveSecretKeyEnc" | "sandboxDeviceKeyEnc" | "sandboxSecretKeyEnc", string>> = {};
    const fields = [
      ["liveDeviceKeyEnc", "live", "device-key"],
      ["liveSecretKeyEnc", "live", "secret-key"],
      ["sandboxDeviceKeyEnc", "sandbox", "device-key"],
      ["sandboxSecretKeyEnc", "sandbox", "secret-key"],
    ] as const;
    for (const [field, env, kind] of fields) {
      const sealed = shop[field];
      if (sealed && cipher.needsRotation(sealed)) {
        const context = credentialContext(shop.id, env, kind);
        data[field] = cipher.encrypt(cipher.decrypt(sealed, context), context);
      }
    }
    if (Object.keys(data).length > 0) {
      await db.shop.update({ where: { id: shop.id }, data });
      changed++;
    }
  }
  return changed;
}
