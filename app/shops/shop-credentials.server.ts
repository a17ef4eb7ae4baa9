// A shop's record and its gateway credentials: created on first use with an unguessable
// notification-URL token; credentials are sealed with the credential cipher and bound to
// the shop, environment and field they belong to. A key rotation re-seals them, and the shops'
// Shopify tokens (app/shops/shopify-sessions.server.ts) with them.
import { randomBytes } from "node:crypto";
import type { Database } from "~/db/database.server";
import type { GatewayEnv } from "~/payments/deps";
import type { Shop } from "../../generated/prisma/sqlite/client";
import { NO_CREDENTIALS } from "./credential-columns";
import { CredentialDecryptionError, isSealed, type CredentialCipher } from "./credential-cipher.server";
import { openSessionToken, sessionTokenContext } from "./shopify-sessions.server";

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

/**
 * Shopify issued the shop a new offline token through OAuth or token exchange (the library's
 * afterAuth: an install, a reinstall, or the merchant opening the app after the last token
 * ran out), which Shopify does only for an installed app. From `now` on, an uninstall
 * triggered earlier is about an earlier install (handleAppUninstalled ignores it), even when
 * Shopify delivers it only after the reinstall. A renewal with a refresh token is not one: it
 * is made without the merchant, and the pair it gets may be stored long after it was issued.
 *
 * Shopify keeps a payments app's readiness per install, and a new install starts not ready.
 * This may be one (an uninstall that was never carried out leaves the row saying ready from
 * the install before), so the readiness is left to be sent again: the next readiness pass, or
 * the merchant's next change, tells Shopify when the credentials can take payments. When it
 * is only a new token for the same install, that sends Shopify what it already knows, once.
 */
export async function recordInstall(db: Database, shopDomain: string, now: Date): Promise<Shop> {
  return db.shop.upsert({
    where: { shopDomain },
    create: { shopDomain, webhookToken: newWebhookToken(), installedAt: now },
    update: { installedAt: now, uninstalledAt: null, paymentsAppReady: false },
  });
}

/**
 * How far a session token's issue time may run ahead of the recorded install time before it is
 * written: an admin in use writes at most about once a minute per shop, not on every request.
 */
export const INSTALL_TIME_STEP_MS = 60_000;

/**
 * A session token that authenticated an admin request: Shopify signs one only while the app is
 * installed, so the app was installed at its `issuedAt` (its iat, by Shopify's clock, the clock
 * of the webhooks' X-Shopify-Triggered-At too). The install time is raised to it, so an
 * uninstall triggered before it is about an earlier install, even when the library reused the
 * stored offline token on a reinstall and afterAuth (recordInstall) never ran. Written only
 * while the recorded time is over INSTALL_TIME_STEP_MS older, and only for a shop the app has
 * as installed; whether it wrote.
 */
export async function recordInstalledAsOf(db: Database, shopDomain: string, issuedAt: Date): Promise<boolean> {
  const stale = new Date(issuedAt.getTime() - INSTALL_TIME_STEP_MS);
  const written = await db.shop.updateMany({
    where: { shopDomain, uninstalledAt: null, OR: [{ installedAt: null }, { installedAt: { lt: stale } }] },
    data: { installedAt: issuedAt },
  });
  return written.count > 0;
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
  return db.shop.update({ where: { id: shop.id }, data: env === "all" ? { ...NO_CREDENTIALS.live, ...NO_CREDENTIALS.sandbox } : NO_CREDENTIALS[env] });
}

/**
 * Removes an environment's credentials from use, keeping them sealed as they are (over any
 * retired before) for reading the orders and verifying the notifications of the payments
 * still in progress on them. Only while the row still holds those credentials.
 */
export async function retireCredentials(db: Database, shop: Shop, env: GatewayEnv): Promise<void> {
  const retired =
    env === "live"
      ? { liveRetiredDeviceKeyEnc: shop.liveDeviceKeyEnc, liveRetiredSecretKeyEnc: shop.liveSecretKeyEnc }
      : { sandboxRetiredDeviceKeyEnc: shop.sandboxDeviceKeyEnc, sandboxRetiredSecretKeyEnc: shop.sandboxSecretKeyEnc };
  const data = { ...NO_CREDENTIALS[env], ...retired };
  const current = env === "live" ? { liveDeviceKeyEnc: shop.liveDeviceKeyEnc, liveSecretKeyEnc: shop.liveSecretKeyEnc } : { sandboxDeviceKeyEnc: shop.sandboxDeviceKeyEnc, sandboxSecretKeyEnc: shop.sandboxSecretKeyEnc };
  await db.shop.updateMany({ where: { id: shop.id, ...current }, data });
}

// Retired credentials (removed while payments on them were in progress) are sealed as they
// were when current, under the same context.
const SEALED_FIELDS = [
  ["liveDeviceKeyEnc", "live", "device-key", "live device-key"],
  ["liveSecretKeyEnc", "live", "secret-key", "live secret-key"],
  ["sandboxDeviceKeyEnc", "sandbox", "device-key", "sandbox device-key"],
  ["sandboxSecretKeyEnc", "sandbox", "secret-key", "sandbox secret-key"],
  ["liveRetiredDeviceKeyEnc", "live", "device-key", "live retired device-key"],
  ["liveRetiredSecretKeyEnc", "live", "secret-key", "live retired secret-key"],
  ["sandboxRetiredDeviceKeyEnc", "sandbox", "device-key", "sandbox retired device-key"],
  ["sandboxRetiredSecretKeyEnc", "sandbox", "secret-key", "sandbox retired secret-key"],
] as const;
type SealedField = (typeof SEALED_FIELDS)[number][0];
type SealedCredentials = Pick<Shop, "id" | "shopDomain" | SealedField>;
const sealedColumns = {
  id: true,
  shopDomain: true,
  ...(Object.fromEntries(SEALED_FIELDS.map(([field]) => [field, true])) as Record<SealedField, true>),
} as const;

const SESSION_TOKENS = [
  ["accessToken", "access-token"],
  ["refreshToken", "refresh-token"],
] as const;
type TokenField = (typeof SESSION_TOKENS)[number][0];
interface SealedTokens {
  id: string;
  shop: string;
  accessToken: string;
  refreshToken: string | null;
}
const tokenColumns = { id: true, shop: true, accessToken: true, refreshToken: true } as const;

// How often one row is read again when it changed between the rotation's read and its write;
// a row that keeps changing is left on its old key for the next run.
const ROTATION_ATTEMPTS = 5;

/** A row's values sealed with the current key (those to write), and the names of those no configured key opens. */
interface Resealed<Field extends string> {
  data: Partial<Record<Field, string>>;
  unreadable: string[];
}

/** The shop's credentials that are sealed with an older key, sealed again with the current one. */
function resealedCredentials(shop: SealedCredentials, cipher: CredentialCipher): Resealed<SealedField> {
  const result: Resealed<SealedField> = { data: {}, unreadable: [] };
  for (const [field, env, kind, label] of SEALED_FIELDS) {
    const sealed = shop[field];
    if (sealed === null || !cipher.needsRotation(sealed)) continue;
    const context = credentialContext(shop.id, env, kind);
    const opened = openOrNull(() => cipher.decrypt(sealed, context));
    if (opened === null) result.unreadable.push(label);
    else result.data[field] = cipher.encrypt(opened, context);
  }
  return result;
}

/** A stored Shopify token in clear (stored before tokens were sealed) or sealed with an older key than the current one. */
function tokenNeedsSealing(stored: string | null, cipher: CredentialCipher): stored is string {
  return stored !== null && stored !== "" && (!isSealed(stored) || cipher.needsRotation(stored));
}

/** The session's Shopify tokens stored in clear or sealed with an older key, sealed with the current one. */
function resealedTokens(session: SealedTokens, cipher: CredentialCipher): Resealed<TokenField> {
  const result: Resealed<TokenField> = { data: {}, unreadable: [] };
  for (const [field, token] of SESSION_TOKENS) {
    const stored = session[field];
    if (!tokenNeedsSealing(stored, cipher)) continue;
    const opened = openOrNull(() => openSessionToken(cipher, session.id, token, stored));
    if (opened === null) result.unreadable.push(`Shopify ${token}`);
    else result.data[field] = cipher.encrypt(opened, sessionTokenContext(session.id, token));
  }
  return result;
}

function openOrNull(open: () => string): string | null {
  try {
    return open();
  } catch (error) {
    if (error instanceof CredentialDecryptionError) return null;
    throw error;
  }
}

/**
 * Seals each row's values again, writing a row only while it still holds the very values its
 * new ones were made from (`write` is conditional on them); a row changed in between is read
 * again. Returns how many rows were written, and the rows left with values no key opens.
 */
async function resealEach<Row, Field extends string>(
  rows: Row[],
  steps: {
    reseal(row: Row): Resealed<Field>;
    write(row: Row, data: Partial<Record<Field, string>>): Promise<boolean>;
    readAgain(row: Row): Promise<Row | null>;
  },
): Promise<{ written: number; unreadable: { row: Row; values: string[] }[] }> {
  let written = 0;
  const unreadable: { row: Row; values: string[] }[] = [];
  for (const first of rows) {
    let row: Row | null = first;
    let resealed: Resealed<Field> = { data: {}, unreadable: [] };
    for (let attempt = 1; row && attempt <= ROTATION_ATTEMPTS; attempt++) {
      resealed = steps.reseal(row);
      if (Object.keys(resealed.data).length === 0) break;
      if (await steps.write(row, resealed.data)) {
        written++;
        break;
      }
      row = await steps.readAgain(row);
    }
    if (row && resealed.unreadable.length > 0) unreadable.push({ row, values: resealed.unreadable });
  }
  return { written, unreadable };
}

export interface RotationReport {
  /** Shops whose gateway credentials were written sealed with the current key. */
  shops: number;
  /** Shopify sessions whose tokens were written sealed with the current key (again, or for the first time when stored in clear). */
  sessions: number;
  /**
   * Shops holding a credential or token that none of the configured keys opens (sealed with a
   * key no longer listed, or damaged), left as they are while everything else is re-sealed: by
   * shop domain, with which values (never the values).
   */
  unreadable: { shopDomain: string; values: string[] }[];
}

/**
 * Re-seals every gateway credential and every Shopify token with the current key (after a key
 * rotation), and seals the Shopify tokens still stored in clear. The shops keep working
 * meanwhile: a row's new values are written only while it still holds the very values they
 * were made from, so a removal, an uninstall, a new device or a renewed token saved in between
 * is never overwritten with the old values; the row is read again and what it holds then is
 * re-sealed. A value no configured key opens is reported and left as it is, and the rotation
 * goes on with the next.
 */
export async function rotateCredentialEncryption(db: Database, cipher: CredentialCipher): Promise<RotationReport> {
  const shops = await resealEach(await db.shop.findMany({ select: sealedColumns }), {
    reseal: (shop) => resealedCredentials(shop, cipher),
    // Only while the row holds every value the new ones were made from.
    write: async (row, data) => (await db.shop.updateMany({ where: row, data })).count > 0,
    readAgain: ({ id }) => db.shop.findUnique({ where: { id }, select: sealedColumns }),
  });
  const sessions = await resealEach(await db.session.findMany({ select: tokenColumns }), {
    reseal: (session) => resealedTokens(session, cipher),
    write: async ({ id, accessToken, refreshToken }, data) => (await db.session.updateMany({ where: { id, accessToken, refreshToken }, data })).count > 0,
    readAgain: ({ id }) => db.session.findUnique({ where: { id }, select: tokenColumns }),
  });
  const unreadable = new Map<string, string[]>();
  for (const { row, values } of shops.unreadable) unreadable.set(row.shopDomain, [...(unreadable.get(row.shopDomain) ?? []), ...values]);
  for (const { row, values } of sessions.unreadable) unreadable.set(row.shop, [...(unreadable.get(row.shop) ?? []), ...values]);
  return {
    shops: shops.written,
    sessions: sessions.written,
    unreadable: [...unreadable].map(([shopDomain, values]) => ({ shopDomain, values })),
  };
}

/** Shops with a credential still sealed with an older key than the current one. */
export async function shopsOnOldKeys(db: Database, cipher: CredentialCipher): Promise<number> {
  const shops = await db.shop.findMany({ select: sealedColumns });
  return shops.filter((shop) => SEALED_FIELDS.some(([field]) => shop[field] !== null && cipher.needsRotation(shop[field]))).length;
}

/** Shopify sessions with a token stored in clear or sealed with an older key than the current one. */
export async function sessionsOnOldKeys(db: Database, cipher: CredentialCipher): Promise<number> {
  const sessions = await db.session.findMany({ select: tokenColumns });
  return sessions.filter((session) => SESSION_TOKENS.some(([field]) => tokenNeedsSealing(session[field], cipher))).length;
}
