// How far the shopper's payment has got, in the coin: what the order's on-chain
// transactions add up to against the crypto amount asked for, and the payment URI for what
// is still due. Decided on the amounts themselves, in decimals: the gateway's percentage is
// rounded (one unit short of 0.0158 still reads 100.0) and its received_amount is the fiat
// value of what arrived, not the coin.
import Decimal from "decimal.js";
import { PLAIN_DECIMAL } from "~/gateway/money";

// Coin amounts carry up to 18 decimals on top of their whole part: more digits than
// decimal.js keeps by default (20 significant), and a sum must never be rounded.
export const Exact = Decimal.clone({ precision: 80 });

export interface PaymentProgress {
  /** Crypto received so far, confirmed or not. */
  received: Decimal;
  /** Crypto still due; zero once the amount is covered (or passed). */
  remaining: Decimal;
  /** Crypto received beyond the amount asked for; zero unless the amount was passed. */
  excess: Decimal;
}

/** What the transactions add up to, in the coin, confirmed or not; null when there are none, or an amount cannot be read. */
export function cryptoReceived(transactions: readonly { amount: string }[]): Decimal | null {
  if (transactions.length === 0 || !transactions.every((t) => PLAIN_DECIMAL.test(t.amount))) return null;
  return transactions.reduce((sum, t) => sum.plus(t.amount), new Exact(0));
}

/** Null until the order's transactions are known (or when an amount cannot be read). */
export function paymentProgress(cryptoAmount: string | null, transactions: readonly { amount: string }[]): PaymentProgress | null {
  const received = cryptoReceived(transactions);
  if (!cryptoAmount || !PLAIN_DECIMAL.test(cryptoAmount) || received === null) return null;
  const expected = new Exact(cryptoAmount);
  if (expected.isZero()) return null;
  return { received, remaining: Exact.max(expected.minus(received), 0), excess: Exact.max(received.minus(expected), 0) };
}

/**
 * The gateway's payment URI asking for `remaining` instead of the full amount, or null when
 * the URI is not of the form the gateway documents (scheme:<address>?amount=<amount>, plus
 * the tag/memo parameter of some coins) with the order's crypto amount in it: a Lightning
 * invoice, for one, fixes its amount and cannot be rewritten. Only the amount changes, so
 * the scheme, address and tag/memo stay the gateway's own.
 */
export function remainderPaymentUri(paymentUri: string, cryptoAmount: string, remaining: string): string | null {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):([^?#]+)\?([^#]+)$/.exec(paymentUri);
  if (!match || !PLAIN_DECIMAL.test(cryptoAmount) || !PLAIN_DECIMAL.test(remaining)) return null;
  const [, scheme = "", address = "", query = ""] = match;
  const params = query.split("&");
  const amounts = params.filter((param) => param.startsWith("amount="));
  if (amounts.length !== 1) return null;
  const stated = (amounts[0] ?? "").slice("amount=".length);
  if (!PLAIN_DECIMAL.test(stated) || !new Exact(stated).eq(cryptoAmount)) return null;
  const rewritten = params.map((param) => (param.startsWith("amount=") ? `amount=${remaining}` : param));
  return `${scheme}:${address}?${rewritten.join("&")}`;
}

/** The most decimals a percentage paid is shown with. */
const PERCENTAGE_DECIMALS = 2;

/** A percentage paid as shown: its digits, and whether it stands for one below them, above zero (written "<0.01"). */
export interface ShownPercentage {
  value: string;
  under: boolean;
}

/**
 * The gateway's percentage paid as shown to people: with the digits the gateway wrote ("100.0",
 * "50"), but a float's tail ("33.333333333333336") cut to two decimals, down, so that a payment
 * short of the whole never reads 100. One above zero that would read zero so ("0.004") is shown
 * as under the smallest shown ("0.01"), as crypto did arrive. Text that is no plain decimal is
 * shown as stored.
 */
export function shownPercentage(percentage: string): ShownPercentage {
  if (!PLAIN_DECIMAL.test(percentage)) return { value: percentage, under: false };
  const [whole, fraction] = percentage.split(".");
  if (fraction === undefined) return { value: percentage, under: false };
  const value = `${whole}.${fraction.slice(0, PERCENTAGE_DECIMALS)}`;
  const cutToZero = /^0+\.0+$/.test(value) && /[1-9]/.test(fraction);
  return cutToZero ? { value: `0.${"1".padStart(PERCENTAGE_DECIMALS, "0")}`, under: true } : { value, under: false };
}

/**
 * The gateway's percentage paid (as stored, "50.0") as a decimal; null when there is none, it
 * does not read as a number, or nothing is paid yet.
 */
export function paidPercentage(percentage: string | null | undefined): Decimal | null {
  if (!percentage) return null;
  try {
    const value = new Decimal(percentage);
    return value.gt(0) ? value : null;
  } catch {
    return null;
  }
}
