// How the admin writes times, money and percentages. Everything is formatted on the
// server into plain text (UTC), so the page reads the same before and after hydration,
// and money stays the decimal string the database holds: it is never turned into a float.
import { isFiatCode } from "~/gateway/fiat-codes";
import { formatFiatAmount } from "~/gateway/money";
import { shownPercentage } from "~/payment-page/progress";

const pad = (n: number) => String(n).padStart(2, "0");

/** "2026-05-01 14:03:07 UTC", or an em dash when there is no time. */
export function formatDateTime(value: Date | null | undefined): string {
  if (!value) return "—";
  return `${value.getUTCFullYear()}-${pad(value.getUTCMonth() + 1)}-${pad(value.getUTCDate())} ${pad(value.getUTCHours())}:${pad(value.getUTCMinutes())}:${pad(value.getUTCSeconds())} UTC`;
}

/**
 * A stored decimal amount with its currency. A fiat amount gets its currency's minor digits
 * (the gateway states "49.9" for 49.90 EUR); any other amount, or one with more digits than
 * its fiat has, reads as stored: nothing is rounded.
 */
export function formatMoney(amount: string | null | undefined, currency: string | null | undefined): string {
  if (amount === null || amount === undefined || amount === "") return "—";
  if (!currency) return amount;
  const shown = isFiatCode(currency) ? formatFiatAmount(amount, currency).unwrapOr(amount) : amount;
  return `${shown} ${currency}`;
}

/** The gateway's percentage paid ("100.0" → "100.0%", as English writes it); its digits as the gateway wrote them, up to two decimals, or under the smallest of those ("<0.01%"; shownPercentage). */
export function formatPercentage(value: string | null | undefined): string {
  if (value === null || value === undefined || value === "") return "—";
  const shown = shownPercentage(value);
  return `${shown.under ? "<" : ""}${shown.value}%`;
}
