// The settings page's data: the shop's current choices and, for each gateway environment
// with a device, its coins (with their per-payment limits) to pick from, plus the form
// reader that turns the posted fields into the input updateShopSettings validates.
import { z } from "zod";
import { CURRENCY_LIMITS_FIAT, offeredCoinsOf } from "~/payment-page/coins";
import type { GatewayCurrency } from "~/gateway/schemas";
import type { CallBudget } from "~/gateway/client";
import type { GatewayEnv } from "~/payments/deps";
import type { AppServices } from "~/services.server";
import { NO_FIXED_COIN_MESSAGE, settingsVersion } from "~/shops/onboarding.server";
import type { Shop } from "../../generated/prisma/sqlite/client";
import { environmentConnection } from "./connection.server";

export interface CoinOption {
  symbol: string;
  name: string;
  blockchain: string;
  limits: string;
  /** False for a coin the shop chose that the environment no longer lists: shown so it can be changed. */
  listed: boolean;
}

/** One environment's coin settings: live orders and Shopify's test orders are created on different gateways, with different symbols. */
export interface EnvironmentCoins {
  env: GatewayEnv;
  label: string;
  connected: boolean;
  /** Connected under an encryption key the app no longer holds. */
  unreadable: boolean;
  fixedCurrency: string;
  offeredCurrencies: string[];
  /** The environment's coins; null when it has no device or its gateway cannot be reached. */
  coins: CoinOption[] | null;
}

export interface SettingsView {
  /** The stored settings' version (`settingsVersion`), sent back with the form. */
  version: string;
  checkoutMode: string;
  gatewayLanguage: string;
  testMode: boolean;
  readOrderOnWebhook: boolean;
  live: EnvironmentCoins;
  sandbox: EnvironmentCoins;
}

function coinOption(c: GatewayCurrency): CoinOption {
  return {
    symbol: c.symbol,
    name: c.name,
    blockchain: c.blockchain,
    limits: `from ${c.min_amount} ${CURRENCY_LIMITS_FIAT}${c.max_amount === null ? ", no maximum" : ` to ${c.max_amount} ${CURRENCY_LIMITS_FIAT}`} per payment`,
    listed: true,
  };
}

/** The gateway's coins read for the settings page: the merchant waits on it. */
const PAGE_LOAD_READ: CallBudget = { timeoutMs: 4_000, retry: { maxAttempts: 1 }, quotaMaxWaitMs: 2_000 };

async function environmentCoins(services: AppServices, shop: Shop, env: GatewayEnv): Promise<EnvironmentCoins> {
  const fixedCurrency = (env === "live" ? shop.liveFixedCurrency : shop.sandboxFixedCurrency) ?? "";
  const offeredCurrencies = offeredCoinsOf(shop, env);
  const connection = environmentConnection(shop, env, services.gateways);
  const access = connection.unreadable ? null : services.gateways.forShop(shop, env);
  // The merchant waits on the page: one short attempt, a short wait for the quota, and none at all
  // for 30 s after one failed (a gateway down would otherwise hold every load of the page
  // for the client's whole retry budget, even one made only to turn test mode on).
  const currencies = access ? await services.gateways.currencies(access, PAGE_LOAD_READ, { pauseAfterFailure: true }) : null;
  let coins: CoinOption[] | null = null;
  if (currencies) {
    coins = currencies.map(coinOption);
    const chosen = [...(fixedCurrency ? [fixedCurrency] : []), ...offeredCurrencies];
    for (const symbol of new Set(chosen)) {
      if (!coins.some((c) => c.symbol === symbol)) coins.push({ symbol, name: symbol, blockchain: "", limits: "", listed: false });
    }
  }
  return { env, label: connection.label, connected: connection.connected, unreadable: connection.unreadable, fixedCurrency, offeredCurrencies, coins };
}

export async function settingsView(services: AppServices, shop: Shop): Promise<SettingsView> {
  const [live, sandbox] = await Promise.all([environmentCoins(services, shop, "live"), environmentCoins(services, shop, "sandbox")]);
  return {
    version: settingsVersion(shop),
    checkoutMode: shop.checkoutMode,
    gatewayLanguage: shop.gatewayLanguage,
    testMode: shop.testMode,
    readOrderOnWebhook: shop.readOrderOnWebhook,
    live,
    sandbox,
  };
}

const symbolField = z.string().max(24);

const formSchema = z.object({
  checkoutMode: z.string().max(32),
  liveFixedCurrency: symbolField.default(""),
  sandboxFixedCurrency: symbolField.default(""),
  liveOfferedCurrencies: z.array(symbolField).max(100),
  sandboxOfferedCurrencies: z.array(symbolField).max(100),
  gatewayLanguage: z.string().max(8),
  testMode: z.enum(["true", "false"]).transform((v) => v === "true"),
  readOrderOnWebhook: z.enum(["true", "false"]).transform((v) => v === "true"),
  version: z.string().regex(/^[A-Za-z0-9_-]{22}$/).optional(),
});

/** A field of the settings page an error is about: "fixedCurrency" is the fixed coin of each environment shown. */
export type SettingsField = "fixedCurrency";

export type SettingsFormResult = { ok: true; value: unknown; version: string | undefined } | { ok: false; message: string; field?: SettingsField };

/**
 * The posted settings form as updateShopSettings' input (which checks the values themselves).
 * A fixed coin left unchosen is refused here already, the same way, so that the page can
 * mark the coin fields rather than only say it in a banner.
 */
export function readSettingsForm(form: FormData): SettingsFormResult {
  const text = (name: string) => {
    const v = form.get(name);
    return typeof v === "string" ? v : undefined;
  };
  const symbols = (name: string) => form.getAll(name).filter((v): v is string => typeof v === "string" && v !== "");
  const parsed = formSchema.safeParse({
    checkoutMode: text("checkoutMode"),
    liveFixedCurrency: text("liveFixedCurrency") ?? "",
    sandboxFixedCurrency: text("sandboxFixedCurrency") ?? "",
    liveOfferedCurrencies: symbols("liveOfferedCurrencies"),
    sandboxOfferedCurrencies: symbols("sandboxOfferedCurrencies"),
    gatewayLanguage: text("gatewayLanguage"),
    testMode: text("testMode") ?? "false",
    readOrderOnWebhook: text("readOrderOnWebhook") ?? "false",
    version: text("version"),
  });
  if (!parsed.success) return { ok: false, message: "The settings form was incomplete; reload the page and try again." };
  const { version, ...value } = parsed.data;
  const { checkoutMode, liveFixedCurrency, sandboxFixedCurrency } = value;
  if (checkoutMode === "fixed_coin" && !liveFixedCurrency && !sandboxFixedCurrency) {
    return { ok: false, message: NO_FIXED_COIN_MESSAGE, field: "fixedCurrency" };
  }
  return { ok: true, value, version };
}
