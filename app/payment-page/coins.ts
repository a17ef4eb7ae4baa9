// Which coins a shopper may pick on the app's payment page, and what paying with each
// takes: the shop's chosen subset of the coins of the payment's gateway environment,
// within each coin's per-payment limits; a destination tag or memo for XRP, XLM and ALGO;
// an invoice, not an address, for Lightning.
import Decimal from "decimal.js";
import { z } from "zod";
import type { GatewayCurrency } from "~/gateway/schemas";
import type { GatewayEnv } from "~/payments/deps";
import type { Shop } from "../../generated/prisma/sqlite/client";
import type { MemoKind } from "./texts";

/**
 * The fiat GET /currencies states min_amount and max_amount in. The limits are only
 * compared when the payment is in this currency; in any other currency the gateway
 * itself refuses an amount out of bounds and the shopper is asked to choose again.
 */
export const CURRENCY_LIMITS_FIAT = "EUR";

export const LIGHTNING_SYMBOL = "BTCL";

export interface CoinChoice {
  symbol: string;
  name: string;
  blockchain: string;
}

export function withinLimits(coin: Pick<GatewayCurrency, "min_amount" | "max_amount">, amount: string, fiat: string): boolean {
  if (fiat !== CURRENCY_LIMITS_FIAT) return true;
  let value: Decimal;
  try {
    value = new Decimal(amount);
  } catch {
    return false;
  }
  if (value.lt(coin.min_amount)) return false;
  return coin.max_amount === null || value.lte(coin.max_amount);
}

const storedSymbols = z.array(z.string()).catch([]);

/**
 * The symbols the shop offers on the app's page in one gateway environment ([] = all of
 * its coins): each environment has its own list, in its own symbols.
 */
export function offeredCoinsOf(shop: Pick<Shop, "liveOfferedCurrencies" | "sandboxOfferedCurrencies">, env: GatewayEnv): string[] {
  try {
    return storedSymbols.parse(JSON.parse(env === "live" ? shop.liveOfferedCurrencies : shop.sandboxOfferedCurrencies));
  } catch {
    return [];
  }
}

/** The coins to show, in the gateway's order: offered by the shop ([] = all) and within limits. */
export function offerableCoins(currencies: readonly GatewayCurrency[], offered: readonly string[], amount: string, fiat: string): CoinChoice[] {
  const allowed = offered.length > 0 ? new Set(offered) : null;
  return currencies
    .filter((c) => (allowed ? allowed.has(c.symbol) : true) && withinLimits(c, amount, fiat))
    .map((c) => ({ symbol: c.symbol, name: c.name, blockchain: c.blockchain }));
}

/** What the tag/memo is called for a coin that needs one (XRP, XLM, ALGO), or null. */
export function memoKind(symbol: string, blockchain?: string | null): MemoKind | null {
  const network = (blockchain ?? symbol).toUpperCase();
  const code = symbol.toUpperCase();
  if (network === "XRP" || code === "XRP" || code.startsWith("XRP_")) return "destination_tag";
  if (network === "XLM" || code === "XLM" || code.startsWith("XLM_")) return "memo";
  if (network === "ALGO" || code === "ALGO" || code.startsWith("ALGO_")) return "note";
  return null;
}

export function isLightning(symbol: string): boolean {
  return symbol.toUpperCase() === LIGHTNING_SYMBOL;
}
