// Which coins a shopper may pick on the app's payment page, and what paying with each
// takes: the shop's chosen subset of the coins of the payment's gateway environment,
// within each coin's per-payment limits, less those the gateway refused for the payment's
// amount; a destination tag or memo for XRP, XLM and ALGO; an invoice, not an address, for
// Lightning.
import Decimal from "decimal.js";
import { z } from "zod";
import type { GatewayCurrency } from "~/gateway/schemas";
import type { GatewayEnv } from "~/payments/deps";
import type { Shop } from "../../generated/prisma/sqlite/client";
import type { MemoKind } from "./texts";

/**
 * The fiat GET /currencies states min_amount and max_amount in. The limits are only
 * compared when the payment is in this currency; in any other currency the gateway itself
 * refuses an amount out of bounds when the shopper picks the coin, and the payment
 * remembers the refusal (refusedSymbols): the coin, and those it rules out, are no longer
 * offered.
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

/**
 * Which of a coin's limits the gateway said a payment's amount is outside of ("outside_limits":
 * it did not say which), or "none_named": it refused the coin for the payment in words that name
 * no limit (a coin it no longer lists, documents it asks for...). Each rules the coin out for the
 * payment; a limit named rules out the coins whose limits it implies too.
 */
export const AMOUNT_LIMITS = ["below_min", "above_max", "outside_limits", "none_named"] as const;
export type AmountLimit = (typeof AMOUNT_LIMITS)[number];

/**
 * Whether the gateway's reason for refusing an order ("Amount 5.00 USD is below the minimum
 * amount of 10.80 USD for USDC_ERC20.") says the amount is outside the coin's limits, and which
 * one; null for any other reason (an unknown coin, a bad URL, missing documents...), which
 * says nothing of the coin and the amount.
 */
export function amountLimitIn(reason: string | null | undefined): Exclude<AmountLimit, "none_named"> | null {
  if (!reason) return null;
  const below = /\b(minimum|min_amount|m[ií]nimo)\b/i.test(reason);
  const above = /\b(maximum|max_amount|m[aá]ximo)\b/i.test(reason);
  if (below && above) return "outside_limits";
  return below ? "below_min" : above ? "above_max" : null;
}

/** The timeline event that remembers a coin the gateway refused for the payment: { currency, limit, cause }. */
export const COIN_REFUSED_EVENT = "coin_refused";

/** A coin the gateway refused for a payment's amount. */
export interface RefusedCoin {
  symbol: string;
  limit: AmountLimit;
}

/**
 * The coins the gateway will refuse for this payment's amount: those it refused, and those a
 * refusal rules out. Every coin's limits are converted into the order's fiat at the same rate,
 * so an amount below one coin's minimum is below every minimum as high or higher, and one above
 * a coin's maximum is above every maximum as low or lower.
 */
export function refusedSymbols(currencies: readonly GatewayCurrency[], refused: readonly RefusedCoin[]): Set<string> {
  const out = new Set<string>();
  for (const { symbol, limit } of refused) {
    out.add(symbol);
    const coin = currencies.find((c) => c.symbol === symbol);
    if (!coin) continue;
    for (const other of currencies) {
      if (limit === "below_min" && new Decimal(other.min_amount).gte(coin.min_amount)) out.add(other.symbol);
      if (limit === "above_max" && coin.max_amount !== null && other.max_amount !== null && new Decimal(other.max_amount).lte(coin.max_amount)) out.add(other.symbol);
    }
  }
  return out;
}

/**
 * The coins to show, in the gateway's order: offered by the shop ([] = all), within limits,
 * and not refused by the gateway for this payment's amount (see refusedSymbols).
 */
export function offerableCoins(
  currencies: readonly GatewayCurrency[],
  offered: readonly string[],
  amount: string,
  fiat: string,
  refused: readonly RefusedCoin[] = [],
): CoinChoice[] {
  const allowed = offered.length > 0 ? new Set(offered) : null;
  const ruledOut = refusedSymbols(currencies, refused);
  return currencies
    .filter((c) => (allowed ? allowed.has(c.symbol) : true) && withinLimits(c, amount, fiat) && !ruledOut.has(c.symbol))
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
