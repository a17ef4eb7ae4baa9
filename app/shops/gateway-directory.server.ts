// Gives each shop its gateway clients (live and sandbox) from its encrypted credentials,
// sharing one quota store per process so every call counts against the device's budget.
import { err } from "neverthrow";
import { createGatewayClient, type GatewayClient } from "~/gateway/client";
import type { RetryPolicy } from "~/gateway/retry";
import type { QuotaStore } from "~/gateway/quota";
import { GatewayInvalidRequestError } from "~/gateway/errors";
import type { GatewayCurrency } from "~/gateway/schemas";
import { registerSecret, type Logger } from "~/lib/logger.server";
import type { GatewayDirectory, GatewayEnv, ShopCredentials, ShopGatewayAccess } from "~/payments/deps";
import { isCredentialDecryptionError, type CredentialCipher } from "./credential-cipher.server";
import { credentialContext, deviceKeyHash } from "./shop-credentials.server";
import type { Shop } from "../../generated/prisma/sqlite/client";

export interface GatewayDirectoryOptions {
  cipher: CredentialCipher;
  baseUrls: Record<GatewayEnv, string>;
  quotaStore: QuotaStore;
  logger: Logger;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /** The clients' retries (tests shorten the waits); the gateway's guidance by default. */
  retry?: Partial<RetryPolicy>;
  currenciesTtlMs?: number;
  clock?: () => Date;
}

/**
 * How long a shop's decrypted credentials (and their client) are kept unused: the next use after
 * that decrypts them again. So the key and secret of a shop that uninstalled, or whose
 * credentials were removed on another instance, are not held for the life of the process.
 */
export const CLIENT_IDLE_MS = 30 * 60_000;

/** How long the coin list is not asked for again after GET /currencies failed. */
export const CURRENCIES_FAILURE_PAUSE_MS = 30_000;

export function createGatewayDirectory(options: GatewayDirectoryOptions): GatewayDirectory {
  // Keyed by the sealed values themselves: sealing draws a fresh nonce, so any change of a
  // credential (even two in the same millisecond, or from another instance) is a new key.
  const clients = new Map<string, { sealed: string; access: ShopGatewayAccess; usedAt: number }>();
  let sweptAt = Date.now();
  const currencyCache = new Map<GatewayClient, { at: number; currencies: GatewayCurrency[] }>();
  const ttl = options.currenciesTtlMs ?? 10 * 60_000;
  // After a failed GET /currencies the shopper's page does not ask the device again for a
  // while: it would otherwise ask at every load, spending the device's quota on a gateway that
  // is failing (a merchant's save, rare and waited on, always asks). Calls already under way
  // are shared, not repeated.
  const failedAt = new Map<GatewayClient, number>();
  const asking = new Map<GatewayClient, Promise<GatewayCurrency[] | null>>();
  // The retired pairs no configured key opens, logged once each: every read of their orders
  // meets them again, and the merchant's remedy (connecting again) is the same each time.
  const unreadableRetired = new Map<string, string>();

  /** Drops the clients unused for CLIENT_IDLE_MS, looked for at most once a minute. */
  const sweep = (now: number) => {
    if (now - sweptAt < 60_000) return;
    sweptAt = now;
    for (const [cacheKey, held] of clients) if (now - held.usedAt > CLIENT_IDLE_MS) forget(cacheKey);
  };

  const forget = (cacheKey: string) => {
    const held = clients.get(cacheKey);
    if (!held) return;
    clients.delete(cacheKey);
    currencyCache.delete(held.access.client);
    failedAt.delete(held.access.client);
  };

  /** The access for one pair of sealed credentials, decrypted once per change of them. */
  const open = (shop: ShopCredentials, env: GatewayEnv, slot: "current" | "retired", sealedKey: string | null, sealedSecret: string | null): ShopGatewayAccess | null => {
    const cacheKey = `${shop.id}|${env}|${slot}`;
    const now = Date.now();
    sweep(now);
    if (!sealedKey || !sealedSecret) {
      // Removed: the decrypted key and secret are not kept once a read sees them gone.
      forget(cacheKey);
      return null;
    }
    const sealed = `${sealedKey}|${sealedSecret}`;
    const cached = clients.get(cacheKey);
    if (cached && cached.sealed === sealed) {
      cached.usedAt = now;
      return cached.access;
    }
    let deviceKey: string;
    let secretKeyHex: string;
    try {
      // Retired credentials are sealed as they were when current: the same context opens them.
      deviceKey = options.cipher.decrypt(sealedKey, credentialContext(shop.id, env, "device-key"));
      secretKeyHex = options.cipher.decrypt(sealedSecret, credentialContext(shop.id, env, "secret-key"));
    } catch (error) {
      if (slot === "retired" && isCredentialDecryptionError(error) && unreadableRetired.get(cacheKey) !== sealed) {
        unreadableRetired.set(cacheKey, sealed);
        options.logger.warn("Retired gateway credentials cannot be decrypted with the configured keys; orders of the replaced device cannot be read", { shop: shop.shopDomain, env });
      }
      throw error;
    }
    registerSecret(deviceKey);
    registerSecret(secretKeyHex);
    const client = createGatewayClient({
      baseUrl: options.baseUrls[env],
      deviceKey,
      quota: { store: options.quotaStore },
      logger: options.logger.child({ shop: shop.shopDomain, env, ...(slot === "retired" ? { retired: true } : {}) }),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.retry ? { retry: options.retry } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    });
    const access = { env, client, secretKeyHex, deviceKeyHash: deviceKeyHash(deviceKey) };
    clients.set(cacheKey, { sealed, access, usedAt: now });
    return access;
  };

  return {
    forShop(shop, env) {
      return env === "live" ? open(shop, env, "current", shop.liveDeviceKeyEnc, shop.liveSecretKeyEnc) : open(shop, env, "current", shop.sandboxDeviceKeyEnc, shop.sandboxSecretKeyEnc);
    },
    retiredFor(shop, env) {
      return env === "live"
        ? open(shop, env, "retired", shop.liveRetiredDeviceKeyEnc, shop.liveRetiredSecretKeyEnc)
        : open(shop, env, "retired", shop.sandboxRetiredDeviceKeyEnc, shop.sandboxRetiredSecretKeyEnc);
    },
    async currencies(access, budget, { askIf, pauseAfterFailure = false } = {}) {
      const { client } = access;
      const hit = currencyCache.get(client);
      if (hit && Date.now() - hit.at < ttl) return hit.currencies;
      const paused = pauseAfterFailure && Date.now() - (failedAt.get(client) ?? -Infinity) < CURRENCIES_FAILURE_PAUSE_MS;
      if (paused || (askIf && !(await askIf()))) return hit?.currencies ?? null;
      const under = asking.get(client);
      if (under) return under;
      const ask = (async () => {
        const result = await client.currencies(budget);
        if (result.isErr()) {
          failedAt.set(client, Date.now());
          return hit?.currencies ?? null;
        }
        failedAt.delete(client);
        currencyCache.set(client, { at: Date.now(), currencies: result.value });
        return result.value;
      })().finally(() => asking.delete(client));
      asking.set(client, ask);
      return ask;
    },
  };
}

/**
 * A shop's gateway in one environment: connected, not connected, or stored under an
 * encryption key this instance does not hold (a key dropped from CREDENTIALS_ENCRYPTION_KEYS
 * too early), where `forShop` throws. What must answer all the same uses this: the admin's
 * pages (among them the one where the merchant connects the device again), a payment
 * session's refusal, the shopper's pages and return, the gateway webhooks' door, and the
 * readiness Shopify is told (readyToTakePayments).
 */
export type ShopGateway = { state: "connected"; access: ShopGatewayAccess } | { state: "not_connected" } | { state: "unreadable" };

export function shopGateway(gateways: GatewayDirectory, shop: ShopCredentials, env: GatewayEnv, slot: "current" | "retired" = "current"): ShopGateway {
  return gatewayState(() => (slot === "current" ? gateways.forShop(shop, env) : gateways.retiredFor(shop, env)));
}

function gatewayState(open: () => ShopGatewayAccess | null): ShopGateway {
  try {
    const access = open();
    return access ? { state: "connected", access } : { state: "not_connected" };
  } catch (error) {
    if (isCredentialDecryptionError(error)) return { state: "unreadable" };
    throw error;
  }
}

/** The retired device of an order reader that holds current credentials too. */
export interface RetiredOrderReader {
  /**
   * The retired device's gateway, opened at the first read that needs it. Null when its
   * credentials cannot be decrypted (sealed under an encryption key dropped too early): then
   * nothing is read through it, and the current device reads on as if there were none.
   */
  access(): ShopGatewayAccess | null;
  /**
   * Reads by identifier made through it so far, each after the current device's gateway
   * answered that it has no such order: the current device may not see the retired device's
   * orders at all (another merchant's, as a sandbox reconnected signs up a new one).
   */
  readonly fallbacks: number;
}

/** The gateway to read payments' orders with (orderReaderAccess). */
export interface OrderReaderAccess extends ShopGatewayAccess {
  /**
   * While the environment holds retired credentials beside its current ones: the client reads
   * an order by identifier through them when the current device's gateway does not know it,
   * and only their own listing shows their device's orders (the client lists the current
   * device's). Null otherwise.
   */
  retired: RetiredOrderReader | null;
}

/**
 * The gateway to read a payment's order with: the environment's credentials, else those the
 * merchant removed while payments on them were in progress. When it holds both (the merchant
 * connected another device while payments on the previous one were followed), an order the
 * current device's gateway answers it does not have is read through the retired device: the
 * new device may belong to another merchant, who sees none of the previous device's orders.
 * Throws as `forShop` does for the credentials it reads with: the current ones, else the
 * retired ones. Beside current credentials the retired ones are opened only when an order is
 * read through them, and ones no configured key opens fail that read alone: the current
 * device's payments go on being read and settled.
 */
export function orderReaderAccess(gateways: GatewayDirectory, shop: ShopCredentials, env: GatewayEnv): OrderReaderAccess | null {
  const current = gateways.forShop(shop, env);
  if (current && holdsRetired(shop, env)) return readingThroughRetired(current, () => gateways.retiredFor(shop, env));
  const only = current ?? gateways.retiredFor(shop, env);
  return only ? { ...only, retired: null } : null;
}

function holdsRetired(shop: ShopCredentials, env: GatewayEnv): boolean {
  return env === "live"
    ? shop.liveRetiredDeviceKeyEnc !== null && shop.liveRetiredSecretKeyEnc !== null
    : shop.sandboxRetiredDeviceKeyEnc !== null && shop.sandboxRetiredSecretKeyEnc !== null;
}

/**
 * Reads through the current device, and by identifier through the retired one only when the
 * current device's gateway answered that the order does not exist (404). Any other failure (a
 * 5xx, a timeout, a 429, the quota) says "try later", not "not this device's", and is answered
 * as it is. Everything else is the current device's: its listing (the reconciler lists the
 * retired device itself when the current one turns out not to see its orders), and what
 * creates orders or devices, which a reader never does. Retired credentials no configured key
 * opens fail the read that needed them as one that may succeed later (connecting the device
 * again, or the key restored), never as "gone".
 */
function readingThroughRetired(current: ShopGatewayAccess, openRetired: () => ShopGatewayAccess | null): OrderReaderAccess {
  let fallbacks = 0;
  let retired: { access: ShopGatewayAccess | null } | null = null;
  const retiredAccess = (): ShopGatewayAccess | null => {
    if (retired) return retired.access;
    const gateway = gatewayState(openRetired);
    retired = { access: gateway.state === "connected" ? gateway.access : null };
    return retired.access;
  };
  const client: GatewayClient = {
    currencies: () => current.client.currencies(),
    createDevice: (name) => current.client.createDevice(name),
    listOrders: (range, budget) => current.client.listOrders(range, budget),
    createOrder: (request) => current.client.createOrder(request),
    prepareOrder: (request) => current.client.prepareOrder(request),
    async orderInfo(identifier, budget) {
      const read = await current.client.orderInfo(identifier, budget);
      if (read.isOk() || read.error.kind !== "not_found") return read;
      const through = retiredAccess();
      if (!through) return err(new GatewayInvalidRequestError(["retired_credentials"], "the replaced device's stored credentials cannot be decrypted with the configured keys"));
      fallbacks++;
      const earlier = await through.client.orderInfo(identifier, budget);
      // Unknown to both devices: gone. A retired device that fails says "try later", never "gone".
      return earlier.isErr() && earlier.error.kind === "not_found" ? read : earlier;
    },
    // A read may go through either device, each counted on its own key: what both can still
    // spare, once the retired one was opened (before that, every call went to the current one).
    async quotaRemaining() {
      const through = retired?.access ?? null;
      if (!through) return current.client.quotaRemaining();
      const [a, b] = await Promise.all([current.client.quotaRemaining(), through.client.quotaRemaining()]);
      return {
        general: { minute: Math.min(a.general.minute, b.general.minute), day: Math.min(a.general.day, b.general.day) },
        critical: { minute: Math.min(a.critical.minute, b.critical.minute), day: Math.min(a.critical.day, b.critical.day) },
      };
    },
  };
  return {
    env: current.env,
    client,
    secretKeyHex: current.secretKeyHex,
    deviceKeyHash: current.deviceKeyHash,
    retired: {
      access: retiredAccess,
      get fallbacks() {
        return fallbacks;
      },
    },
  };
}

/** orderReaderAccess, for what must answer even when the credentials cannot be read. */
export function orderReader(gateways: GatewayDirectory, shop: ShopCredentials, env: GatewayEnv): ShopGateway {
  return gatewayState(() => orderReaderAccess(gateways, shop, env));
}

/**
 * Whether the shop can take payments now: its mode's environment (the sandbox in test mode)
 * has credentials stored that this instance can read. What Shopify is told (paymentsAppConfigure).
 */
export function readyToTakePayments(gateways: GatewayDirectory, shop: ShopCredentials & Pick<Shop, "testMode">): boolean {
  return shopGateway(gateways, shop, shop.testMode ? "sandbox" : "live").state === "connected";
}

/**
 * Whether Shopify already holds `ready` (readyToTakePayments) as the shop's readiness, as far as
 * the row can vouch: the row says so, and no new token or late uninstall has put it in doubt
 * since (readinessUnconfirmed). Otherwise the readiness is to be sent.
 */
export function readinessHeldByShopify(shop: Pick<Shop, "paymentsAppReady" | "readinessUnconfirmed">, ready: boolean): boolean {
  return shop.paymentsAppReady === ready && !shop.readinessUnconfirmed;
}
