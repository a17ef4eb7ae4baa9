// Flow 1: the merchant connects a gateway device. The key is checked against the gateway
// at once (GET /currencies), the credentials are stored encrypted, and Shopify is told
// the payment method is ready (paymentsAppConfigure) — or no longer ready when removed.
import { createHash } from "node:crypto";
import { z } from "zod";
import { createGatewayClient } from "~/gateway/client";
import { isDayWindow, type QuotaStore } from "~/gateway/quota";
import { formatDateTime } from "~/admin/format";
import { GATEWAY_WEBHOOKS_PATH } from "~/lib/routed-path";
import type { GatewayError } from "~/gateway/errors";
import type { Shop } from "../../generated/prisma/sqlite/client";
import type { GatewayEnv, PaymentsDeps } from "~/payments/deps";
import { deliverNow, enqueue } from "~/payments/outbox";
import { offeredCoinsOf } from "~/payment-page/coins";
import type { CredentialCipher } from "./credential-cipher.server";
import { paymentsOnCredentials } from "~/payments/payment-state";
import { paymentsOnCurrentCredentials, paymentsOnRetiredCredentials } from "./credential-columns";
import {
  deleteCredentials,
  ensureShop,
  replaceCredentials,
  retireCredentials,
  retiringReplacesEarlier,
  credentialsInUseReadable,
  SHOP_UNINSTALLED_MESSAGE,
  type ReplacedCredentials,
} from "./shop-credentials.server";
import { readinessHeldByShopify, readyToTakePayments, shopGateway } from "./gateway-directory.server";

export interface ShopsDeps extends PaymentsDeps {
  cipher: CredentialCipher;
  appUrl: string;
  gatewayBaseUrls: Record<GatewayEnv, string>;
  /** The devices' call budgets the gateway directory's clients count in too: a key check is a call on the device. */
  quotaStore: QuotaStore;
  fetch?: typeof fetch;
}

export const credentialsInputSchema = z.object({
  env: z.enum(["live", "sandbox"]),
  deviceKey: z
    .string()
    .trim()
    .min(8, "The device API key is too short.")
    .max(128, "The device API key is too long.")
    .regex(/^[A-Za-z0-9-]+$/, "The device API key has characters a key never has (letters, digits and dashes only)."),
  secretKeyHex: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^(?:[0-9a-f]{2}){16,64}$/, "The Secret Key must be the hexadecimal text shown in the gateway dashboard (32 to 128 hex characters)."),
});
export type CredentialsInput = z.infer<typeof credentialsInputSchema>;

export type OnboardingFailure = {
  ok: false;
  field?: "deviceKey" | "secretKeyHex";
  message: string;
  kind: "invalid_input" | "unauthorized" | "unreachable" | "gateway_error" | "uninstalled";
};

const UNINSTALLED: OnboardingFailure = { ok: false, kind: "uninstalled", message: SHOP_UNINSTALLED_MESSAGE };

export function notificationUrl(appUrl: string, shop: Pick<Shop, "webhookToken">): string {
  return `${appUrl.replace(/\/+$/, "")}${GATEWAY_WEBHOOKS_PATH}${shop.webhookToken}`;
}

const DEVICE_OUTCOME_UNKNOWN =
  "The gateway did not confirm whether it created the device. Look for it in the gateway dashboard's devices before creating another: it may be there already.";

const THROTTLED: OnboardingFailure = { ok: false, kind: "gateway_error", message: "The gateway is limiting requests for this device. Try again in a minute." };

export function describeKeyCheckFailure(error: GatewayError): OnboardingFailure {
  switch (error.kind) {
    case "unauthorized":
      return { ok: false, kind: "unauthorized", field: "deviceKey", message: "The gateway refused this device key: it is wrong, or the device is disabled in the gateway dashboard." };
    case "network":
    case "timeout":
      return { ok: false, kind: "unreachable", message: "The gateway cannot be reached right now. Check your connection and try again in a minute." };
    case "quota_exhausted":
      // The device's budget, shared with its payments: the day's may be spent for hours.
      if (isDayWindow(error.window)) {
        return { ok: false, kind: "gateway_error", message: `The gateway's calls for this device are used up for the day. Try again after ${formatDateTime(error.retryAt)}.` };
      }
      return THROTTLED;
    case "throttled":
      return THROTTLED;
    case "server_error":
      return { ok: false, kind: "gateway_error", message: `The gateway failed to answer (HTTP ${error.status}). Try again in a few minutes.` };
    case "rejected":
      return { ok: false, kind: "gateway_error", message: `The gateway refused the request (HTTP ${error.status})${error.detail === null ? "" : `: ${error.detail.replace(/[\s.]+$/, "")}`}.` };
    case "not_found":
      return { ok: false, kind: "gateway_error", message: "The gateway answered that it has no such resource (HTTP 404). Try again later." };
    case "invalid_response":
      return { ok: false, kind: "gateway_error", message: "The gateway's answer could not be read. Try again later." };
    case "invalid_request":
      return { ok: false, kind: "invalid_input", message: `The request was not sent: ${error.reason}.` };
    case "outcome_unknown":
      // Only a creation's outcome can be unknown, and it is not sent again (the gateway does not
      // deduplicate): another try could make a second device.
      return { ok: false, kind: "gateway_error", message: DEVICE_OUTCOME_UNKNOWN };
  }
}

/**
 * Tells Shopify whether the payment method can be offered, when that changed, when the row
 * cannot vouch for what Shopify holds (readinessUnconfirmed), or when Shopify refused the last
 * call that told it (it may not know the shop's readiness at all then). Not
 * ready also while the stored credentials cannot be read: every payment session would be
 * refused, so checkout should not offer the method.
 */
export async function syncPaymentsAppReadiness(deps: ShopsDeps, shop: Shop): Promise<boolean> {
  // Decided on the row as it is now, and written only while it still is: a change saved in
  // another tab between the caller's read and this (test mode switched, credentials connected
  // or removed) would otherwise have Shopify told a readiness the shop no longer has.
  for (let attempt = 1; attempt <= READINESS_ATTEMPTS; attempt++) {
    const row = await deps.db.shop.findUnique({ where: { id: shop.id } });
    // Shopify takes no call for an uninstalled shop, and its next install starts not ready.
    if (!row || row.uninstalledAt !== null) return false;
    const ready = readyToTakePayments(deps.gateways, row);
    if (readinessHeldByShopify(row, ready) && !(await lastReadinessCallRefused(deps, row))) return false;
    const now = deps.clock.now();
    const outcome = await deps.db.$transaction(async (tx) => {
      const written = await tx.shop.updateMany({
        where: { id: row.id, uninstalledAt: null, paymentsAppReady: row.paymentsAppReady, readinessUnconfirmed: row.readinessUnconfirmed, ...readinessColumns(row) },
        data: { paymentsAppReady: ready, readinessUnconfirmed: false },
      });
      if (written.count === 0) return "changed" as const;
      return enqueue(tx, {
        shopDomain: row.shopDomain,
        dedupeKey: `configure:${row.id}:${now.getTime()}:${ready}`,
        payload: { kind: "app.configure", ready, externalHandle: row.shopDomain },
        now,
      });
    });
    if (outcome === "changed") continue;
    if (outcome) await deliverNow(deps, outcome.id);
    return true;
  }
  // The row kept changing: whoever changed it last tells Shopify, and the readiness pass checks it.
  return false;
}

/** How often the readiness is decided again when the row changed between its read and its write. */
const READINESS_ATTEMPTS = 5;

/** What a shop's readiness is decided on (readyToTakePayments), as the row holds it. */
function readinessColumns(shop: Shop) {
  return {
    testMode: shop.testMode,
    liveDeviceKeyEnc: shop.liveDeviceKeyEnc,
    liveSecretKeyEnc: shop.liveSecretKeyEnc,
    sandboxDeviceKeyEnc: shop.sandboxDeviceKeyEnc,
    sandboxSecretKeyEnc: shop.sandboxSecretKeyEnc,
  };
}

/**
 * Brings every installed shop's readiness in Shopify in line with whether its credentials can
 * be read now: they stop being readable when an encryption key is dropped too early, and
 * become readable again when it is put back, with nothing stored changing. A shop whose last
 * readiness call Shopify refused is told again (once a pass): Shopify may not know its
 * readiness at all, and checkout would not offer the method until a merchant's save. So is a
 * shop whose readiness the row cannot vouch for (readinessUnconfirmed). Returns the shops
 * whose readiness was sent.
 */
export async function syncReadinessOfInstalledShops(deps: ShopsDeps): Promise<number> {
  const shops = await deps.db.shop.findMany({ where: { uninstalledAt: null } });
  // Shops with a refused readiness call on record; whether it was their last is asked shop by shop.
  const refusedBefore = new Set(
    (await deps.db.outboxMessage.findMany({ where: { kind: "app.configure", status: "failed" }, select: { shopDomain: true }, distinct: ["shopDomain"] })).map((m) => m.shopDomain),
  );
  let sent = 0;
  for (const shop of shops) {
    try {
      if (readinessHeldByShopify(shop, readyToTakePayments(deps.gateways, shop)) && !refusedBefore.has(shop.shopDomain)) continue;
      if (await syncPaymentsAppReadiness(deps, shop)) sent++;
    } catch (error) {
      deps.logger.error("Could not update the shop's readiness in Shopify", { shop: shop.shopDomain, error });
    }
  }
  if (sent > 0) deps.logger.info("Readiness sent to Shopify for shops whose credentials became readable or unreadable, or whose last readiness call it refused", { shops: sent });
  return sent;
}

/**
 * Renew an offline token this long before its refresh token runs out (Shopify honours one for
 * 90 days): a shop whose shoppers rarely pay in crypto, and whose merchant does not open the
 * app, would otherwise have none that works for the next payment's resolve.
 */
export const RENEW_REFRESH_TOKEN_BEFORE_MS = 30 * 86_400_000;

/**
 * Keeps the installed shops' offline tokens alive (the readiness pass runs it); the count
 * renewed. Once `stopping` says so, no further renewal is begun (the rest wait for the next pass).
 */
export async function keepOfflineTokensAlive(deps: ShopsDeps, options: { stopping?: () => boolean } = {}): Promise<number> {
  if (!deps.shopify.renewTokensRunningOut) return 0;
  const now = deps.clock.now();
  const renewed = await deps.shopify.renewTokensRunningOut(now, new Date(now.getTime() + RENEW_REFRESH_TOKEN_BEFORE_MS), options.stopping);
  if (renewed > 0) deps.logger.info("Renewed offline tokens whose refresh token was running out", { shops: renewed });
  return renewed;
}

async function lastReadinessCallRefused(deps: ShopsDeps, shop: Shop): Promise<boolean> {
  const last = await deps.db.outboxMessage.findFirst({
    where: { shopDomain: shop.shopDomain, kind: "app.configure" },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    select: { status: true },
  });
  return last?.status === "failed";
}

/** A device connected; `notice`: what the merchant is told of the payments in progress on the device it replaced, if anything. */
export type ConnectResult = { ok: true; shop: Shop; notice: string | null } | OnboardingFailure;

/** What the merchant is told of the credentials a connection replaced, or null when there is nothing to say. */
export function replacementNotice(replaced: ReplacedCredentials): string | null {
  const kept = "Payments in progress on the previous device will still be finished with it: its credentials are kept, out of use, until those payments no longer need them.";
  switch (replaced) {
    case "none":
    case "deleted":
      return null;
    case "retired":
      return kept;
    case "retired_over_earlier":
      return `${kept} ${EARLIER_CREDENTIALS_DELETED}`;
    case "unreadable":
      return "The previous device's credentials could not be read with the app's encryption keys, so they could not be kept for the payments still in progress on it: check those payments in the gateway dashboard.";
  }
}

/** What the merchant is told when credentials kept for payments still followed on them were written over (a connect or a removal). */
const EARLIER_CREDENTIALS_DELETED =
  "The credentials of the device before it, kept until now for payments that may still be in progress on them, were deleted to make room: that device's notifications are no longer accepted, so check its payments still in progress in the gateway dashboard.";

/** The notice of a removal that kept the removed credentials in the place of earlier ones still needed (removeGatewayCredentials). */
const REMOVAL_OVER_EARLIER_NOTICE = `Payments in progress on the removed device will still be finished with it: its credentials are kept, out of use, until those payments no longer need them. ${EARLIER_CREDENTIALS_DELETED}`;

/**
 * How many payments begun on the environment's retired credentials, and still followed, would
 * lose them to a removal of the credentials in use now: a removal that keeps those (payments on
 * them are followed) writes them over the retired pair, as connecting another device does. None
 * when the retired slot is empty or holds the very credentials in use. The connection page asks
 * it before the merchant confirms a removal, and the removal to tell the merchant and log it.
 */
export function paymentsOnEarlierCredentialsFollowed(deps: ShopsDeps, shop: Shop, env: GatewayEnv): Promise<number> {
  if (!retiringReplacesEarlier(deps.cipher, shop, env)) return Promise.resolve(0);
  return deps.db.payment.count({ where: { shopId: shop.id, gatewayEnv: env, AND: [paymentsOnRetiredCredentials(shop, env), paymentsOnCredentials(deps.clock.now())] } });
}

/** How many payments begun on the environment's credentials in use, as `shop` holds them, still need them. */
function paymentsFollowedInUse(deps: ShopsDeps, shop: Shop, env: GatewayEnv): Promise<number> {
  return deps.db.payment.count({ where: { shopId: shop.id, gatewayEnv: env, AND: [paymentsOnCurrentCredentials(shop, env), paymentsOnCredentials(deps.clock.now())] } });
}

/**
 * Stores an environment's new credentials. Those it held are kept, out of use, while payments
 * begun on them are followed, as a removal keeps them (replaceCredentials), so that a new
 * device does not leave the payments begun on the previous one without their notifications.
 * Payments begun on credentials retired before do not count: they keep those.
 */
async function connectCredentials(deps: ShopsDeps, shop: Shop, env: GatewayEnv, credentials: { deviceKey: string; secretKeyHex: string }) {
  const followed = async (row: Shop) => (await paymentsFollowedInUse(deps, row, env)) > 0;
  const stored = await replaceCredentials(deps.db, deps.cipher, shop, env, credentials, deps.clock.now(), followed);
  if (!stored) return null;
  if (stored.replaced === "retired_over_earlier" || stored.replaced === "unreadable") {
    deps.logger.warn("Gateway credentials still needed by payments in progress were deleted to connect a new device", { shop: shop.shopDomain, env, replaced: stored.replaced });
  }
  return stored;
}

export async function connectGateway(deps: ShopsDeps, shopDomain: string, raw: unknown): Promise<ConnectResult> {
  const parsed = credentialsInputSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path[0] === "secretKeyHex" ? "secretKeyHex" : "deviceKey";
    return { ok: false, kind: "invalid_input", field, message: issue?.message ?? "Invalid input." };
  }
  const input = parsed.data;
  const probe = createGatewayClient({
    baseUrl: deps.gatewayBaseUrls[input.env],
    deviceKey: input.deviceKey,
    retry: { maxAttempts: 2 },
    timeoutMs: 8_000,
    quota: { store: deps.quotaStore },
    clock: () => deps.clock.now(),
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
  const check = await probe.currencies();
  if (check.isErr()) return describeKeyCheckFailure(check.error);
  // Read after the check, which may take seconds: an uninstall handled meanwhile refuses the connection.
  const stored = await connectCredentials(deps, await ensureShop(deps.db, shopDomain), input.env, input);
  if (!stored) return UNINSTALLED;
  const { shop, replaced } = stored;
  deps.logger.info("Gateway credentials connected", { shop: shopDomain, env: input.env, previous: replaced });
  await syncPaymentsAppReadiness(deps, shop);
  return { ok: true, shop: await deps.db.shop.findUniqueOrThrow({ where: { id: shop.id } }), notice: replacementNotice(replaced) };
}

/** Whether the shop is marked uninstalled now (a conditional write found it so, or found it changed otherwise). */
async function uninstalled(deps: ShopsDeps, shop: Shop): Promise<boolean> {
  const row = await deps.db.shop.findUnique({ where: { id: shop.id }, select: { uninstalledAt: true } });
  return row === null || row.uninstalledAt !== null;
}

export const CREDENTIALS_CHANGED_MESSAGE =
  "Nothing was removed: the device's credentials were changed since this page was loaded (another device was connected, or they were removed, in another tab or by someone else). The page now shows the device connected: remove it again if you mean to.";

/**
 * Takes an environment's credentials out of use: no new payment starts on them. While payments
 * begun on them are still followed (in progress, awaiting the check of a notification, or
 * rejected and still watched for late crypto), they are kept, sealed, only to read those
 * payments' orders and verify their notifications, and deleted once the last one no longer
 * needs them (app/payments/retention.ts); otherwise they are deleted at once. Kept, they take
 * the place of credentials retired before, as when another device is connected: when payments
 * on those are still followed, the merchant is told (`notice`) and a warning is logged.
 *
 * `confirmedFor` is the credentialsVersion the merchant confirmed the removal for: credentials
 * connected since (another tab, another staff member) are not removed on that confirmation.
 * The write is made only while the row still holds the very credentials compared, so one
 * connected between the comparison and the write is not removed either.
 */
export async function removeGatewayCredentials(
  deps: ShopsDeps,
  shopDomain: string,
  env: GatewayEnv,
  confirmedFor: string,
): Promise<{ ok: true; shop: Shop; notice: string | null } | { ok: false; message: string }> {
  const shop = await ensureShop(deps.db, shopDomain);
  if (shop.uninstalledAt) return { ok: false, message: SHOP_UNINSTALLED_MESSAGE };
  if (credentialsVersion(shop, env) !== confirmedFor) return { ok: false, message: CREDENTIALS_CHANGED_MESSAGE };
  const followed = await paymentsFollowedInUse(deps, shop, env);
  // A pair no configured key opens reads no order and verifies no notification: kept, it would
  // only take the place of retired credentials that still do (connecting a device never keeps
  // one either). Its payments are then finished as for credentials deleted.
  const keep = followed > 0 && credentialsInUseReadable(deps.cipher, shop, env);
  const overEarlier = keep && (await paymentsOnEarlierCredentialsFollowed(deps, shop, env)) > 0;
  const written = keep ? await retireCredentials(deps.db, shop, env, deps.clock.now()) : await deleteCredentials(deps.db, shop, env);
  if (!written) return { ok: false, message: (await uninstalled(deps, shop)) ? SHOP_UNINSTALLED_MESSAGE : CREDENTIALS_CHANGED_MESSAGE };
  if (overEarlier) {
    deps.logger.warn("Gateway credentials still needed by payments in progress were deleted to keep those of a removed device", { shop: shopDomain, env, replaced: "retired_over_earlier" });
  }
  deps.logger.info("Gateway credentials removed", { shop: shopDomain, env, keptForPaymentsFollowed: keep ? followed : 0, ...(followed > 0 && !keep ? { unreadableNotKept: true } : {}) });
  const removed = await deps.db.shop.findUniqueOrThrow({ where: { id: shop.id } });
  await syncPaymentsAppReadiness(deps, removed);
  return { ok: true, shop: await deps.db.shop.findUniqueOrThrow({ where: { id: shop.id } }), notice: overEarlier ? REMOVAL_OVER_EARLIER_NOTICE : null };
}

const UNREADABLE_DEVICE = "The stored credentials of this device cannot be read with the app's encryption keys: connect the device again first.";

/** POST /device/ with the shop's key: the new key is returned once and never stored here. */
export async function createDedicatedDevice(deps: ShopsDeps, shopDomain: string, env: GatewayEnv, name: string) {
  const shop = await ensureShop(deps.db, shopDomain);
  if (shop.uninstalledAt) return { ok: false as const, message: SHOP_UNINSTALLED_MESSAGE };
  const gateway = shopGateway(deps.gateways, shop, env);
  if (gateway.state === "not_connected") return { ok: false as const, message: "Connect a device first: a new device is created with an existing device's key." };
  if (gateway.state === "unreadable") return { ok: false as const, message: UNREADABLE_DEVICE };
  const { access } = gateway;
  const cleanName = name.trim().slice(0, 128);
  if (!cleanName) return { ok: false as const, message: "Give the new device a name." };
  const created = await access.client.createDevice(cleanName);
  if (created.isErr()) return describeKeyCheckFailure(created.error);
  return { ok: true as const, device: created.value };
}

const fixedCoinSchema = z.string().trim().max(24).optional().transform((v) => v || null);
const offeredCoinsSchema = z
  .array(z.string().trim().min(1).max(24))
  .max(100)
  .default([])
  .transform((symbols) => [...new Set(symbols)]);

const settingsSchema = z.object({
  checkoutMode: z.enum(["gateway_choice", "fixed_coin", "app_page"]),
  liveFixedCurrency: fixedCoinSchema,
  sandboxFixedCurrency: fixedCoinSchema,
  liveOfferedCurrencies: offeredCoinsSchema,
  sandboxOfferedCurrencies: offeredCoinsSchema,
  gatewayLanguage: z.enum(["AUTO", "EN", "ES", "PT", "IT", "FR", "DE"]),
  testMode: z.boolean(),
  readOrderOnWebhook: z.boolean().default(false),
});
export type ShopSettingsInput = z.input<typeof settingsSchema>;
type ShopSettings = z.output<typeof settingsSchema>;

const GATEWAY_NAMES: Record<GatewayEnv, string> = { live: "the live gateway", sandbox: "the gateway sandbox" };

/**
 * Why settings were not saved: `invalid`, the form's values are not settings; `refused`, a
 * coin chosen cannot be offered (its gateway does not list it, or is not connected);
 * `unreachable`, its gateway could not be asked; `changed`, the settings were changed since
 * the page was loaded (it must show them as they are now); `uninstalled`, the app was
 * uninstalled meanwhile.
 */
export type SettingsRefusal = { ok: false; kind: "invalid" | "refused" | "unreachable" | "changed" | "uninstalled"; message: string };

/**
 * Why the coins chosen for one environment cannot be saved, or null. Each coin the merchant
 * adds is checked against that environment's GET /currencies: a symbol it does not list would
 * have every order there refused. Coins already stored are not asked about again, so that a
 * gateway that is down, or has since dropped a coin, does not keep the merchant from
 * changing anything else.
 */
async function coinsRefusal(deps: ShopsDeps, shop: Shop, env: GatewayEnv, input: ShopSettings): Promise<SettingsRefusal | null> {
  const fixed = env === "live" ? input.liveFixedCurrency : input.sandboxFixedCurrency;
  const storedFixed = env === "live" ? shop.liveFixedCurrency : shop.sandboxFixedCurrency;
  const offered = env === "live" ? input.liveOfferedCurrencies : input.sandboxOfferedCurrencies;
  const storedOffered = new Set(offeredCoinsOf(shop, env));
  const added = [...new Set([...(fixed && fixed !== storedFixed ? [fixed] : []), ...offered.filter((symbol) => !storedOffered.has(symbol))])];
  if (added.length === 0) return null;
  const gateway = GATEWAY_NAMES[env];
  const connection = shopGateway(deps.gateways, shop, env);
  const refused = (message: string): SettingsRefusal => ({ ok: false, kind: "refused", message });
  if (connection.state === "not_connected") return refused(`Nothing was saved: connect ${gateway} before choosing its coins.`);
  if (connection.state === "unreadable") return refused(`Nothing was saved: the stored credentials of ${gateway} cannot be read. Connect the device again before choosing its coins.`);
  const currencies = await deps.gateways.currencies(connection.access);
  if (!currencies) return { ok: false, kind: "unreachable", message: `Nothing was saved: ${gateway} cannot be reached to check its coins. Try again in a minute.` };
  const listed = new Set(currencies.map((c) => c.symbol));
  const missing = added.filter((symbol) => !listed.has(symbol));
  if (missing.length === 0) return null;
  return refused(`Nothing was saved: ${gateway} does not offer ${missing.join(", ")}. Choose among the coins it lists.`);
}

/** The columns the settings page edits, as a row's values to match in a conditional update. */
const SETTINGS_COLUMNS = [
  "checkoutMode",
  "gatewayLanguage",
  "testMode",
  "readOrderOnWebhook",
  "liveFixedCurrency",
  "sandboxFixedCurrency",
  "liveOfferedCurrencies",
  "sandboxOfferedCurrencies",
] as const satisfies readonly (keyof Shop)[];

function storedSettings(shop: Shop): Pick<Shop, (typeof SETTINGS_COLUMNS)[number]> {
  return Object.fromEntries(SETTINGS_COLUMNS.map((column) => [column, shop[column]])) as Pick<Shop, (typeof SETTINGS_COLUMNS)[number]>;
}

/**
 * Names the settings as stored: the page sends back the version it showed, so a save made from
 * a page loaded before another change (another tab, another staff member) does not silently
 * undo it. Only these columns count: the shop's row also changes for reasons of its own.
 */
export function settingsVersion(shop: Shop): string {
  return createHash("sha256").update(JSON.stringify(storedSettings(shop))).digest("base64url").slice(0, 22);
}

/**
 * Names the credentials an environment holds, as stored, or null when it holds none: the
 * connection page asks to confirm a removal for these credentials alone, so a question left
 * open is not asked of a device connected since. Sealing draws a fresh nonce, so a device
 * connected again is named anew too. A digest of the sealed values: nothing of the key shows.
 */
export function credentialsVersion(shop: Shop, env: GatewayEnv): string | null {
  const [deviceKeyEnc, secretKeyEnc] = env === "live" ? [shop.liveDeviceKeyEnc, shop.liveSecretKeyEnc] : [shop.sandboxDeviceKeyEnc, shop.sandboxSecretKeyEnc];
  if (deviceKeyEnc === null || secretKeyEnc === null) return null;
  return createHash("sha256").update(`${deviceKeyEnc}|${secretKeyEnc}`).digest("base64url").slice(0, 22);
}

export const NO_FIXED_COIN_MESSAGE = "Choose the coin shoppers pay with, for real checkouts, Shopify test orders or both.";

export const SETTINGS_CHANGED_MESSAGE =
  "Nothing was saved: the settings were changed since this page was loaded (in another tab, or by someone else). The page now shows them as they are: make your change again.";

/**
 * `shownVersion`: the `settingsVersion` of the page the form was filled in on; the save is
 * refused if the settings changed since (`changed`: the page must show them as they are now).
 */
export async function updateShopSettings(
  deps: ShopsDeps,
  shopDomain: string,
  raw: unknown,
  shownVersion?: string,
): Promise<{ ok: true; shop: Shop } | SettingsRefusal> {
  const parsed = settingsSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, kind: "invalid", message: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") };
  const input = parsed.data;
  if (input.checkoutMode === "fixed_coin" && !input.liveFixedCurrency && !input.sandboxFixedCurrency) {
    return { ok: false, kind: "invalid", message: NO_FIXED_COIN_MESSAGE };
  }
  const shop = await ensureShop(deps.db, shopDomain);
  const uninstalledRefusal: SettingsRefusal = { ok: false, kind: "uninstalled", message: SHOP_UNINSTALLED_MESSAGE };
  if (shop.uninstalledAt) return uninstalledRefusal;
  const changed: SettingsRefusal = { ok: false, kind: "changed", message: SETTINGS_CHANGED_MESSAGE };
  if (shownVersion !== undefined && shownVersion !== settingsVersion(shop)) return changed;
  // A coin its gateway does not offer is told before a gateway that could not be asked.
  const refusals = (await Promise.all([coinsRefusal(deps, shop, "live", input), coinsRefusal(deps, shop, "sandbox", input)])).filter((r) => r !== null);
  const refusal = refusals.find((r) => r.kind === "refused") ?? refusals[0];
  if (refusal) return refusal;
  // Written only over the settings just compared: a save that lands in between is not undone.
  // Only while installed: the coins' check may take seconds, and an uninstall handled meanwhile stands.
  const written = await deps.db.shop.updateMany({
    where: { id: shop.id, uninstalledAt: null, ...storedSettings(shop) },
    data: { ...input, liveOfferedCurrencies: JSON.stringify(input.liveOfferedCurrencies), sandboxOfferedCurrencies: JSON.stringify(input.sandboxOfferedCurrencies) },
  });
  if (written.count === 0) return (await uninstalled(deps, shop)) ? uninstalledRefusal : changed;
  const updated = await deps.db.shop.findUniqueOrThrow({ where: { id: shop.id } });
  await syncPaymentsAppReadiness(deps, updated);
  return { ok: true, shop: await deps.db.shop.findUniqueOrThrow({ where: { id: shop.id } }) };
}

/**
 * Test mode's gateway: signs the shop up with the gateway sandbox (its own merchant,
 * device and Secret Key) and points that device's notifications at this shop.
 */
export async function connectSandbox(deps: ShopsDeps, shopDomain: string): Promise<ConnectResult> {
  const shop = await ensureShop(deps.db, shopDomain);
  if (shop.uninstalledAt) return UNINSTALLED;
  const origin = new URL(deps.gatewayBaseUrls.sandbox).origin;
  const doFetch = deps.fetch ?? fetch;
  // The sandbox's device as the connect form would take it: one the gateway client cannot use
  // (a key with a space, say) is refused here, not stored to fail every page and payment after.
  const credentialShape = credentialsInputSchema.shape;
  const signupSchema = z.object({ device: z.object({ identifier: credentialShape.deviceKey, secret_key: credentialShape.secretKeyHex }) });
  const unreachable: OnboardingFailure = { ok: false, kind: "unreachable", message: `The gateway sandbox cannot be reached at ${origin}. Start it with npm run sandbox.` };
  // Only the calls to the sandbox are caught, as unreachable: an answer that is not JSON is the
  // sandbox refusing, and a failure of this app's own (its database) is not the sandbox's.
  const post = async (path: string, body: unknown): Promise<{ ok: boolean; json: unknown } | null> => {
    let response: Response;
    try {
      response = await doFetch(`${origin}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal: AbortSignal.timeout(8_000) });
    } catch {
      return null;
    }
    const json: unknown = await response.json().catch(() => null);
    return { ok: response.ok, json };
  };
  const signup = await post("/sandbox/merchants", { name: shopDomain });
  if (!signup) return unreachable;
  const device = signupSchema.safeParse(signup.json);
  if (!signup.ok || !device.success) return { ok: false, kind: "gateway_error", message: "The gateway sandbox did not accept the sign-up." };
  const { identifier, secret_key } = device.data.device;
  const settings = await post(`/sandbox/devices/${encodeURIComponent(identifier)}/settings`, { notification_url: notificationUrl(deps.appUrl, shop) });
  if (!settings) return unreachable;
  if (!settings.ok) return { ok: false, kind: "gateway_error", message: "The gateway sandbox did not accept the notification URL." };
  const stored = await connectCredentials(deps, shop, "sandbox", { deviceKey: identifier, secretKeyHex: secret_key });
  if (!stored) return UNINSTALLED;
  await syncPaymentsAppReadiness(deps, stored.shop);
  return { ok: true, shop: await deps.db.shop.findUniqueOrThrow({ where: { id: shop.id } }), notice: replacementNotice(stored.replaced) };
}
