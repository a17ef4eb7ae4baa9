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
    // Installed again: from now on, an uninstall triggered earlier is about the old install.
    return db.shop.update({ where: { id: existing.id }, data: { uninstalledAt: null, installedAt: new Date() } });
  }
  return db.shop.upsert({ where: { shopDomain }, create: { shopDomain, webhookToken: newWebhookToken(), installedAt: new Date() }, update: {} });
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

const SEALED_FIELDS = [
  ["liveDeviceKeyEnc", "live", "device-key"],
  ["liveSecretKeyEnc", "live", "secret-key"],
  ["sandboxDeviceKeyEnc", "sandbox", "device-key"],
  ["sandboxSecretKeyEnc", "sandbox", "secret-key"],
] as const;
type SealedField = (typeof SEALED_FIELDS)[number][0];
type SealedCredentials = Pick<Shop, "id" | SealedField>;
const sealedColumns = { id: true, liveDeviceKeyEnc: true, liveSecretKeyEnc: true, sandboxDeviceKeyEnc: true, sandboxSecretKeyEnc: true } as const;

// How often one shop is read again when its credentials changed between the rotation's read
// and its write; a shop that keeps changing is left on its old key for the next run.
const ROTATION_ATTEMPTS = 5;

/** The shop's credentials that are sealed with an older key, sealed again with the current one. */
function resealed(shop: SealedCredentials, cipher: CredentialCipher): Partial<Record<SealedField, string>> {
  const data: Partial<Record<SealedField, string>> = {};
  for (const [field, env, kind] of SEALED_FIELDS) {
    const sealed = shop[field];
    if (sealed !== null && cipher.needsRotation(sealed)) {
      const context = credentialContext(shop.id, env, kind);
      data[field] = cipher.encrypt(cipher.decrypt(sealed, context), context);
    }
  }
  return data;
}

/**
 * Re-seals every credential with the current key (after a key rotation). Returns how many shops
 * changed. The shops keep working meanwhile: a shop's new values are written only while its row
 * still holds the very ciphertexts they were made from, so a removal, an uninstall or a new
 * device saved in between is never overwritten with the old credentials; the shop is read again
 * and what it holds then is re-sealed.
 */
export async function rotateCredentialEncryption(db: Database, cipher: CredentialCipher): Promise<number> {
  let changed = 0;
  for (const first of await db.shop.findMany({ select: sealedColumns })) {
    const { id } = first;
    let shop: SealedCredentials | null = first;
    for (let attempt = 1; shop && attempt <= ROTATION_ATTEMPTS; attempt++) {
      const data = resealed(shop, cipher);
      if (Object.keys(data).length === 0) break;
      const { liveDeviceKeyEnc, liveSecretKeyEnc, sandboxDeviceKeyEnc, sandboxSecretKeyEnc } = shop;
      const { count } = await db.shop.updateMany({ where: { id, liveDeviceKeyEnc, liveSecretKeyEnc, sandboxDeviceKeyEnc, sandboxSecretKeyEnc }, data });
      if (count > 0) {
        changed++;
        break;
      }
      shop = await db.shop.findUnique({ where: { id }, select: sealedColumns });
    }
  }
  return changed;
}

/** Shops with a credential still sealed with an older key than the current one. */
export async function shopsOnOldKeys(db: Database, cipher: CredentialCipher): Promise<number> {
  const shops = await db.shop.findMany({ select: sealedColumns });
  return shops.filter((shop) => SEALED_FIELDS.some(([field]) => shop[field] !== null && cipher.needsRotation(shop[field]))).length;
}
