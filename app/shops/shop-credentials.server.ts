// A shop's record and its gateway credentials: created on first use with an unguessable
// notification-URL token; credentials are sealed with the credential cipher and bound to
// the shop, environment and field they belong to. A key rotation re-seals them, and the shops'
// Shopify tokens (app/shops/shopify-sessions.server.ts) with them.
import { createHash, randomBytes } from "node:crypto";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Database } from "~/db/database.server";
import type { GatewayEnv } from "~/payments/deps";
import type { Shop } from "../../generated/prisma/sqlite/client";
import { NO_CREDENTIALS } from "./credential-columns";
import { isCredentialDecryptionError, isSealed, type CredentialCipher } from "./credential-cipher.server";
import { openSessionToken, sessionTokenContext } from "./shopify-sessions.server";

export function credentialContext(shopId: string, env: GatewayEnv, field: "device-key" | "secret-key"): string {
  return `${shopId}:${env}:${field}`;
}

/**
 * What names a device across shops without holding its key: the SHA-256 of the key under a
 * purpose of its own, as the quota names devices (hashDeviceKey in app/gateway/quota.ts). The
 * gateway issues device keys as random UUIDs, far too many to try one by one, so the digest does
 * not give the key back; the purpose keeps it from matching the quota's digests of the same key.
 */
export function deviceKeyHash(deviceKey: string): string {
  return createHash("sha256").update("shared-device\0").update(deviceKey).digest("hex");
}

export function newWebhookToken(): string {
  return randomBytes(24).toString("base64url");
}

/**
 * What a new shop's row starts with beyond its columns' defaults: the gateway's page speaks
 * each shopper's language (their locale) until the merchant chooses one. The column's own
 * default, EN, predates that choice and is kept, as changing it would rebuild the shops'
 * table on SQLite; shops made before keep what they have.
 */
const NEW_SHOP_SETTINGS = { gatewayLanguage: "AUTO" } as const;

/**
 * The shop's row, made on first use. A row marked uninstalled is returned as it is: only an
 * install Shopify proves (recordInstall) makes it installed again. A request that began before
 * the uninstall was handled (a gateway key check takes seconds) is no sign of one, and taking it
 * for one would leave the shop installed, with credentials, and its shop/redact ignored.
 */
export async function ensureShop(db: Database, shopDomain: string): Promise<Shop> {
  const existing = await db.shop.findUnique({ where: { shopDomain } });
  if (existing) return existing;
  return db.shop.upsert({ where: { shopDomain }, create: { shopDomain, webhookToken: newWebhookToken(), installedAt: new Date(), ...NEW_SHOP_SETTINGS }, update: {} });
}

/** What the merchant is told when the app was uninstalled from the shop before a change could be saved. */
export const SHOP_UNINSTALLED_MESSAGE =
  "Nothing was saved: the app was uninstalled from this shop. Install it again from Shopify to connect a device or change its settings.";

/**
 * Shopify issued the shop a new offline token through OAuth or token exchange (the library's
 * afterAuth: an install, a reinstall, or the merchant opening the app after the last token
 * ran out), which Shopify does only for an installed app. From `now` on, an uninstall
 * triggered earlier is about an earlier install (handleAppUninstalled ignores it), even when
 * Shopify delivers it only after the reinstall. X-Shopify-Triggered-At is not signed, so this
 * comparison places only Shopify's own deliveries: a replayed body with a fresh time is told
 * apart by asking Shopify whether it still takes the shop's token (confirmUninstall). A renewal with a refresh token is not one: it
 * is made without the merchant, and the pair it gets may be stored long after it was issued.
 *
 * Shopify keeps a payments app's readiness per install, and a new install starts not ready.
 * This may be one (an uninstall that was never carried out leaves the row saying ready from
 * the install before), or only a new token for the same install, whose readiness Shopify
 * keeps: which one, nothing tells. The readiness the row holds is kept, marked unconfirmed, so
 * that the next readiness sync (the pass, or the merchant's next change) sends it whether or
 * not it changed. Set to "not ready" instead, a device removed next would match it, and
 * Shopify, still holding "ready", would go on offering a method that refuses every payment.
 */
export async function recordInstall(db: Database, shopDomain: string, now: Date): Promise<Shop> {
  return db.shop.upsert({
    where: { shopDomain },
    create: { shopDomain, webhookToken: newWebhookToken(), installedAt: now, ...NEW_SHOP_SETTINGS },
    update: { installedAt: now, uninstalledAt: null, readinessUnconfirmed: true },
  });
}

/**
 * How much later than a recorded uninstall a session token must be issued to prove a
 * reinstall: more than a token's life (a minute: one issued before the uninstall may still be
 * in use) and than any skew between Shopify's clock (the token's) and this app's (the uninstall's).
 */
export const REINSTALL_PROOF_AFTER_MS = 2 * 60_000;

/**
 * A session token that authenticated an admin request: Shopify signs one only while the app is
 * installed, so the app was installed at its `issuedAt` (its iat, by Shopify's clock, the clock
 * of the webhooks' X-Shopify-Triggered-At too). The install time is raised to it, so an
 * uninstall triggered before it is about an earlier install, even when the library reused the
 * stored offline token on a reinstall and afterAuth (recordInstall) never ran. Written only
 * when the token is newer than the recorded time, and only for a shop the app has as
 * installed; whether it wrote. The admin's frame asks Shopify for a new token about once a
 * minute and sends it with every request meanwhile, so an admin in use writes about once a
 * minute; no coarser step is taken, since any token later than an uninstall must count (a
 * merchant may uninstall and install again within seconds).
 */
export async function recordInstalledAsOf(db: Database, shopDomain: string, issuedAt: Date): Promise<boolean> {
  // A token issued well after the uninstall was recorded proves the app was installed again,
  // even when afterAuth never ran (the library reused an offline token stored after the
  // uninstall, by a renewal that was under way): as an install, it starts not ready.
  const reinstalled = await db.shop.updateMany({
    where: { shopDomain, uninstalledAt: { lt: new Date(issuedAt.getTime() - REINSTALL_PROOF_AFTER_MS) } },
    data: { installedAt: issuedAt, uninstalledAt: null, paymentsAppReady: false },
  });
  if (reinstalled.count > 0) return true;
  const written = await db.shop.updateMany({
    where: { shopDomain, uninstalledAt: null, OR: [{ installedAt: null }, { installedAt: { lt: issuedAt } }] },
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
  return db.shop.update({ where: { id: shop.id }, data: newCredentialColumns(cipher, shop.id, env, credentials) });
}

/**
 * The columns of an environment's credentials in use, for `credentials`: sealed (bound to the
 * shop, environment and field), the device key's last four characters and its digest.
 */
function newCredentialColumns(cipher: CredentialCipher, shopId: string, env: GatewayEnv, credentials: { deviceKey: string; secretKeyHex: string }) {
  const deviceKeyEnc = cipher.encrypt(credentials.deviceKey, credentialContext(shopId, env, "device-key"));
  const secretKeyEnc = cipher.encrypt(credentials.secretKeyHex, credentialContext(shopId, env, "secret-key"));
  const hint = credentials.deviceKey.slice(-4);
  const hash = deviceKeyHash(credentials.deviceKey);
  return env === "live"
    ? { liveDeviceKeyEnc: deviceKeyEnc, liveSecretKeyEnc: secretKeyEnc, liveDeviceKeyHint: hint, liveDeviceKeyHash: hash }
    : { sandboxDeviceKeyEnc: deviceKeyEnc, sandboxSecretKeyEnc: secretKeyEnc, sandboxDeviceKeyHint: hint, sandboxDeviceKeyHash: hash };
}

/** What became of the credentials an environment held when others were connected in their place. */
export type ReplacedCredentials =
  /** It held none, or the very same ones were connected again: nothing was replaced. */
  | "none"
  /** Deleted: no payment on them was followed any more. */
  | "deleted"
  /** Kept, out of use, for the payments still followed on them. */
  | "retired"
  /**
   * Kept, out of use, for the payments still followed on them, in place of credentials removed
   * or replaced before them that were still kept: those are deleted.
   */
  | "retired_over_earlier"
  /** Deleted although payments on them were followed: none of the app's encryption keys opens them. */
  | "unreadable";

interface SealedPair {
  deviceKeyEnc: string;
  secretKeyEnc: string;
}

function sealedPair(deviceKeyEnc: string | null, secretKeyEnc: string | null): SealedPair | null {
  return deviceKeyEnc !== null && secretKeyEnc !== null ? { deviceKeyEnc, secretKeyEnc } : null;
}

/** The environment's credentials in use, as sealed in the row. */
function pairInUse(shop: Shop, env: GatewayEnv): SealedPair | null {
  return env === "live" ? sealedPair(shop.liveDeviceKeyEnc, shop.liveSecretKeyEnc) : sealedPair(shop.sandboxDeviceKeyEnc, shop.sandboxSecretKeyEnc);
}

/** The environment's retired credentials, as sealed in the row. */
function retiredPair(shop: Shop, env: GatewayEnv): SealedPair | null {
  return env === "live" ? sealedPair(shop.liveRetiredDeviceKeyEnc, shop.liveRetiredSecretKeyEnc) : sealedPair(shop.sandboxRetiredDeviceKeyEnc, shop.sandboxRetiredSecretKeyEnc);
}

/** The environment's credential columns as the row holds them: a write is made only while they are unchanged. */
function heldCredentials(shop: Shop, env: GatewayEnv) {
  return env === "live"
    ? {
        liveDeviceKeyEnc: shop.liveDeviceKeyEnc,
        liveSecretKeyEnc: shop.liveSecretKeyEnc,
        liveRetiredDeviceKeyEnc: shop.liveRetiredDeviceKeyEnc,
        liveRetiredSecretKeyEnc: shop.liveRetiredSecretKeyEnc,
        liveRetiredAt: shop.liveRetiredAt,
      }
    : {
        sandboxDeviceKeyEnc: shop.sandboxDeviceKeyEnc,
        sandboxSecretKeyEnc: shop.sandboxSecretKeyEnc,
        sandboxRetiredDeviceKeyEnc: shop.sandboxRetiredDeviceKeyEnc,
        sandboxRetiredSecretKeyEnc: shop.sandboxRetiredSecretKeyEnc,
        sandboxRetiredAt: shop.sandboxRetiredAt,
      };
}

/** The environment's credentials in use as the row holds them: a removal is written only while they are unchanged. */
function credentialsInUse(shop: Shop, env: GatewayEnv) {
  return env === "live"
    ? { liveDeviceKeyEnc: shop.liveDeviceKeyEnc, liveSecretKeyEnc: shop.liveSecretKeyEnc }
    : { sandboxDeviceKeyEnc: shop.sandboxDeviceKeyEnc, sandboxSecretKeyEnc: shop.sandboxSecretKeyEnc };
}

/** The credentials a sealed pair holds, or null when none of the configured keys opens it. */
function openPair(cipher: CredentialCipher, shopId: string, env: GatewayEnv, pair: SealedPair): { deviceKey: string; secretKeyHex: string } | null {
  try {
    return {
      deviceKey: cipher.decrypt(pair.deviceKeyEnc, credentialContext(shopId, env, "device-key")),
      secretKeyHex: cipher.decrypt(pair.secretKeyEnc, credentialContext(shopId, env, "secret-key")),
    };
  } catch (error) {
    if (isCredentialDecryptionError(error)) return null;
    throw error;
  }
}

function sameCredentials(a: { deviceKey: string; secretKeyHex: string } | null, b: { deviceKey: string; secretKeyHex: string }): boolean {
  return a !== null && a.deviceKey === b.deviceKey && a.secretKeyHex.toLowerCase() === b.secretKeyHex.toLowerCase();
}

// How often the row is read again when its credentials changed between the read and the write
// (another connection or a removal saved meanwhile).
const REPLACE_ATTEMPTS = 5;

/**
 * Stores an environment's new credentials in place of those it holds. When it holds other
 * credentials and payments on them are still followed (`paymentsFollowed`, asked of the row as
 * read: payments begun on its credentials in use that are in progress, awaiting the check of a
 * notification, or rejected and still watched for late crypto), those move to the retired slot
 * in the same write, with `now` as the time they were retired, as a removal keeps them
 * (retireCredentials): the webhook door still verifies those payments' notifications with them
 * (after the current Secret Key), an order the current device's gateway does not know is read
 * with them (orderReaderAccess), and the retention pass deletes them once no payment begun on
 * them (its order requested, or with none requested yet created, before `now`:
 * beganOnRetiredCredentials) needs them. The same credentials connected again are only sealed
 * again: nothing is retired.
 *
 * The retired slot holds one pair. When it already holds credentials removed or replaced
 * before (kept because payments on the environment were followed), the pair just replaced
 * takes their place ("retired_over_earlier", which the merchant is told): it served the most
 * recent payments, whereas those of the earlier pair all began before it was taken out of
 * use, so fewer of them are still followed; a removal does the same. The payments of the
 * earlier pair began before `now` too, so they count as begun on the pair retired now
 * and keep it (a device of the same gateway account reads their orders). Refusing the new
 * device instead could keep a merchant for up to a week from replacing a device whose key leaked.
 *
 * Credentials no configured key opens are replaced without being kept: nothing in this
 * instance can verify or read with them, and a retired pair that cannot be opened would have
 * every notification the current Secret Key does not verify answered as unverifiable.
 *
 * Null, with nothing stored, when the shop is marked uninstalled, also when the uninstall is
 * handled between the read and the write.
 */
export async function replaceCredentials(
  db: Database,
  cipher: CredentialCipher,
  shop: Shop,
  env: GatewayEnv,
  credentials: { deviceKey: string; secretKeyHex: string },
  now: Date,
  paymentsFollowed: (row: Shop) => Promise<boolean>,
): Promise<{ shop: Shop; replaced: ReplacedCredentials } | null> {
  let row = shop;
  for (let attempt = 1; attempt <= REPLACE_ATTEMPTS; attempt++) {
    if (row.uninstalledAt !== null) return null;
    // Asked of each row read: which payments began on its credentials in use depends on when its retired ones were retired.
    const followed = () => paymentsFollowed(row);
    const held = heldCredentials(row, env);
    const current = pairInUse(row, env);
    const retired = retiredPair(row, env);
    let replaced: ReplacedCredentials = "none";
    if (current !== null) {
      const opened = openPair(cipher, row.id, env, current);
      if (opened === null) replaced = (await followed()) ? "unreadable" : "deleted";
      else if (!sameCredentials(opened, credentials)) {
        if (!(await followed())) replaced = "deleted";
        else {
          // The earlier pair is not lost when it is the one replaced, or the one connected now.
          const earlier = retired === null ? null : openPair(cipher, row.id, env, retired);
          const kept = retired === null || sameCredentials(earlier, opened) || sameCredentials(earlier, credentials);
          replaced = kept ? "retired" : "retired_over_earlier";
        }
      }
    }
    const retire = (replaced === "retired" || replaced === "retired_over_earlier") && current !== null;
    const retiring = !retire
      ? {}
      : env === "live"
        ? { liveRetiredDeviceKeyEnc: current.deviceKeyEnc, liveRetiredSecretKeyEnc: current.secretKeyEnc, liveRetiredAt: now }
        : { sandboxRetiredDeviceKeyEnc: current.deviceKeyEnc, sandboxRetiredSecretKeyEnc: current.secretKeyEnc, sandboxRetiredAt: now };
    const data = { ...newCredentialColumns(cipher, row.id, env, credentials), ...retiring };
    // Only over the credentials just read: a pair stored or retired meanwhile is not lost unseen.
    // Only while installed: an uninstall handled meanwhile deleted every credential for good.
    const written = await db.shop.updateMany({ where: { id: row.id, uninstalledAt: null, ...held }, data });
    if (written.count > 0) return { shop: await db.shop.findUniqueOrThrow({ where: { id: row.id } }), replaced };
    row = await db.shop.findUniqueOrThrow({ where: { id: row.id } });
  }
  throw new Error("the shop's gateway credentials kept changing while new ones were stored");
}

/** Whether the environment's credentials in use are stored and a configured key opens them. */
export function credentialsInUseReadable(cipher: CredentialCipher, shop: Shop, env: GatewayEnv): boolean {
  const current = pairInUse(shop, env);
  return current !== null && openPair(cipher, shop.id, env, current) !== null;
}

/**
 * Whether keeping the environment's credentials in use as retired ones (a removal,
 * retireCredentials) would write them over other retired credentials: the retired slot holds a
 * pair other than the one in use (one no configured key opens counts as another). A device
 * removed, connected again and removed once more holds the very same pair in both: nothing is
 * lost then.
 */
export function retiringReplacesEarlier(cipher: CredentialCipher, shop: Shop, env: GatewayEnv): boolean {
  const current = pairInUse(shop, env);
  const retired = retiredPair(shop, env);
  if (current === null || retired === null) return false;
  const opened = openPair(cipher, shop.id, env, current);
  return opened === null || !sameCredentials(openPair(cipher, shop.id, env, retired), opened);
}

/**
 * Removes an environment's credentials from use, keeping them sealed as they are (over any
 * retired before, as connecting another device does: retiringReplacesEarlier says when that
 * loses a pair), with `now` as the time they were retired, for reading the orders and
 * verifying the notifications of the payments begun on them that are still followed. Only
 * while the row still holds the credentials `shop` was read with, and the shop is installed:
 * whether it wrote.
 */
export async function retireCredentials(db: Database, shop: Shop, env: GatewayEnv, now: Date): Promise<boolean> {
  const retired =
    env === "live"
      ? { liveRetiredDeviceKeyEnc: shop.liveDeviceKeyEnc, liveRetiredSecretKeyEnc: shop.liveSecretKeyEnc, liveRetiredAt: now }
      : { sandboxRetiredDeviceKeyEnc: shop.sandboxDeviceKeyEnc, sandboxRetiredSecretKeyEnc: shop.sandboxSecretKeyEnc, sandboxRetiredAt: now };
  const data = { ...NO_CREDENTIALS[env], ...retired };
  const written = await db.shop.updateMany({ where: { id: shop.id, uninstalledAt: null, ...credentialsInUse(shop, env) }, data });
  return written.count > 0;
}

/**
 * Deletes an environment's credentials in use (those retired before stay), only while the row
 * still holds the credentials `shop` was read with, and the shop is installed: whether it wrote.
 */
export async function deleteCredentials(db: Database, shop: Shop, env: GatewayEnv): Promise<boolean> {
  const written = await db.shop.updateMany({ where: { id: shop.id, uninstalledAt: null, ...credentialsInUse(shop, env) }, data: NO_CREDENTIALS[env] });
  return written.count > 0;
}

/** How many shops' keys the digest pass opens between two turns of the event loop. */
const DIGEST_BATCH = 100;

/**
 * Brings the shops' device key digests (deviceKeyHash) in line with the credentials they hold:
 * written for credentials saved before digests were kept, written again where an instance of
 * the release before connected other credentials without one (during a rolling deploy), and
 * emptied where such an instance removed the credentials or handled an uninstall. The readiness
 * pass runs it on every start and every 10 minutes, so that a shop saved long ago is known to
 * share its device within minutes of a deploy, whether or not its merchant opens the app. Each
 * digest is written only while the row still holds the sealed key it was made from; a key none
 * of the configured encryption keys opens is left as it is. How many digests it wrote.
 */
export async function recordDeviceKeyHashes(db: Database, cipher: CredentialCipher): Promise<number> {
  const emptied = await Promise.all([
    db.shop.updateMany({ where: { liveDeviceKeyEnc: null, liveDeviceKeyHash: { not: null } }, data: { liveDeviceKeyHash: null } }),
    db.shop.updateMany({ where: { sandboxDeviceKeyEnc: null, sandboxDeviceKeyHash: { not: null } }, data: { sandboxDeviceKeyHash: null } }),
  ]);
  let written = emptied[0].count + emptied[1].count;
  const shops = await db.shop.findMany({
    where: { uninstalledAt: null, OR: [{ liveDeviceKeyEnc: { not: null } }, { sandboxDeviceKeyEnc: { not: null } }] },
    select: { id: true, liveDeviceKeyEnc: true, liveDeviceKeyHash: true, sandboxDeviceKeyEnc: true, sandboxDeviceKeyHash: true },
  });
  for (const [index, shop] of shops.entries()) {
    // Opening a key is synchronous: with many shops, requests are let in every so often.
    if (index > 0 && index % DIGEST_BATCH === 0) await nextTurn();
    for (const env of ["live", "sandbox"] as const) {
      const [sealed, stored] = env === "live" ? [shop.liveDeviceKeyEnc, shop.liveDeviceKeyHash] : [shop.sandboxDeviceKeyEnc, shop.sandboxDeviceKeyHash];
      if (sealed === null) continue;
      const deviceKey = openOrNull(() => cipher.decrypt(sealed, credentialContext(shop.id, env, "device-key")));
      if (deviceKey === null) continue;
      const hash = deviceKeyHash(deviceKey);
      if (hash === stored) continue;
      const update =
        env === "live"
          ? db.shop.updateMany({ where: { id: shop.id, liveDeviceKeyEnc: sealed }, data: { liveDeviceKeyHash: hash } })
          : db.shop.updateMany({ where: { id: shop.id, sandboxDeviceKeyEnc: sealed }, data: { sandboxDeviceKeyHash: hash } });
      written += (await update).count;
    }
  }
  return written;
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
    if (isCredentialDecryptionError(error)) return null;
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
