// The settings page's data: the shop's current choices and the gateway's coins (with
// their per-payment limits) to pick from, plus the form reader that turns the posted
// fields into the input updateShopSettings validates.
import { z } from "zod";
import { CURRENCY_LIMITS_FIAT } from "~/payment-page/coins";
import type { AppServices } from "~/services.server";
import type { Shop } from "../../generated/prisma/sqlite/client";
import { adminGatewayEnv } from "./connection.server";

export interface CoinOption {
  symbol: string;
  name: string;
  blockchain: string;
  limits: string;
}

export interface SettingsView {
  checkoutMode: string;
  fixedCurrency: string;
  offeredCurrencies: string[];
  gatewayLanguage: string;
  testMode: boolean;
  coins: CoinOption[] | null;
  coinsFrom: string | null;
}

const storedSymbols = z.array(z.string()).catch([]);

export function offeredCurrenciesOf(shop: Pick<Shop, "offeredCurrencies">): string[] {
  try {
    return storedSymbols.parse(JSON.parse(shop.offeredCurrencies));
  } catch {
    return [];
  }
}

export async function settingsView(services: AppServices, shop: Shop): Promise<SettingsView> {
  const env = adminGatewayEnv(shop);
  const access = env ? services.gateways.forShop(shop, env) : null;
  const currencies = access ? await services.gateways.currencies(access) : null;
  return {
    checkoutMode: shop.checkoutMode,
    fixedCurrency: shop.fixedCurrency ?? "",
    offeredCurrencies: offeredCurrenciesOf(shop),
    gatewayLanguage: shop.gatewayLanguage,
    testMode: shop.testMode,
    coins: currencies
      ? currencies.map((c) => ({
          symbol: c.symbol,
          name: c.name,
          blockchain: c.blockchain,
          limits: `from ${c.min_amount} ${CURRENCY_LIMITS_FIAT}${c.max_amount === null ? ", no maximum" : ` to ${c.max_amount} ${CURRENCY_LIMITS_FIAT}`} per payment`,
        }))
      : null,
    coinsFrom: env === "sandbox" ? "the gateway sandbox" : env === "live" ? "the live gateway" : null,
  };
}

const formSchema = z.object({
  checkoutMode: z.string().max(32),
  fixedCurrency: z.string().max(24).default(""),
  offeredCurrencies: z.array(z.string().max(24)).max(100),
  gatewayLanguage: z.string().max(8),
  testMode: z.enum(["true", "false"]).transform((v) => v === "true"),
});

/** The posted settings form as updateShopSettings' input (which checks the values themselves). */
export function readSettingsForm(form: FormData): { ok: true; value: unknown } | { ok: false; message: string } {
  const text = (name: string) => {
    const v = form.get(name);
    return typeof v === "string" ? v : undefined;
  };
  const parsed = formSchema.safeParse({
    checkoutMode: text("checkoutMode"),
    fixedCurrency: text("fixedCurrency") ?? "",
    offeredCurrencies: form.getAll("offeredCurrencies").filter((v): v is string => typeof v === "string" && v !== ""),
    gatewayLanguage: text("gatewayLanguage"),
    testMode: text("testMode") ?? "false",
  });
  if (!parsed.success) return { ok: false, message: "The settings form was incomplete; reload the page and try again." };
  return { ok: true, value: parsed.data };
}
