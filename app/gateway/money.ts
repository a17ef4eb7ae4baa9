// Owns money arithmetic for the gateway: decimal amounts parsed from text,
// per-fiat minor units, formatting that refuses to round, and the min/max
// checks against a currency's limits. No amount ever passes through a float.

import Decimal from "decimal.js";
import { err, ok, type Result } from "neverthrow";
import { fiatMinorDigits, isFiatCode, type FiatCode } from "./fiat-codes";

export { fiatMinorDigits } from "./fiat-codes";

/** A decimal written plainly, as the database holds one: digits, and a point with digits after it; no sign, no exponent. */
export const PLAIN_DECIMAL = /^\d+(\.\d+)?$/;

export type MoneyErrorKind = "malformed_decimal" | "too_many_decimals";

export class MoneyError extends Error {
  override readonly name = "MoneyError";
  constructor(
    readonly kind: MoneyErrorKind,
    message: string,
  ) {
    super(message);
  }
}

// Plain positional notation only: no exponent, no sign other than "-", no
// leading zeros, no bare point. This is also a valid JSON number literal.
const DECIMAL_TEXT = /^-?(0|[1-9]\d*)(\.\d+)?$/;

export function isDecimalText(value: string): boolean {
  return DECIMAL_TEXT.test(value);
}

export function parseDecimal(value: string): Result<Decimal, MoneyError> {
  if (!DECIMAL_TEXT.test(value)) {
    return err(new MoneyError("malformed_decimal", "not a plain decimal number"));
  }
  return ok(new Decimal(value));
}

function toDecimal(amount: string | Decimal): Result<Decimal, MoneyError> {
  return typeof amount === "string" ? parseDecimal(amount) : ok(amount);
}

/** Number of digits after the point that carry value ("1.50" has 1). */
export function significantDecimals(amount: Decimal): number {
  return amount.decimalPlaces();
}

/**
 * Formats an amount with exactly the fiat's minor digits ("10.5" EUR → "10.50",
 * "100" JPY → "100"). An amount that would need rounding ("10.005" EUR,
 * "1.5" JPY) is an error: money is never rounded silently.
 */
export function formatFiatAmount(amount: string | Decimal, fiat: FiatCode): Result<string, MoneyError> {
  return toDecimal(amount).andThen((value) => {
    const digits = fiatMinorDigits(fiat);
    if (value.decimalPlaces() > digits) {
      return err(
        new MoneyError("too_many_decimals", `${fiat} allows ${digits} decimal place(s), the amount has ${value.decimalPlaces()}`),
      );
    }
    return ok(value.toFixed(digits));
  });
}

/**
 * The gateway's received_amount (fiat it works out from the crypto received, and writes as a
 * float: "24.5", or "24.499999999999996") as a person reads it: rounded to the fiat's minor
 * digits, half to even. For showing only: nothing is decided on it, and the export keeps the
 * gateway's own text. Text that is no plain decimal, or a code that is no fiat's, comes back as it is.
 */
export function receivedFiatShown(amount: string, currency: string): string {
  if (!isFiatCode(currency) || !PLAIN_DECIMAL.test(amount)) return amount;
  return new Decimal(amount).toDecimalPlaces(fiatMinorDigits(currency), Decimal.ROUND_HALF_EVEN).toFixed(fiatMinorDigits(currency));
}

/** -1, 0 or 1 as a < b, a = b, a > b. */
export function compareDecimal(a: Decimal, b: Decimal): -1 | 0 | 1 {
  const c = a.comparedTo(b);
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

export interface AmountLimits {
  min_amount: string;
  max_amount: string | null;
}

export type LimitCheck = "within" | "below_min" | "above_max" | "malformed";

/** Both limits are inclusive; a null max_amount means no upper limit. */
export function checkLimits(amount: string | Decimal, limits: AmountLimits): LimitCheck {
  const value = toDecimal(amount);
  const min = parseDecimal(limits.min_amount);
  const max = limits.max_amount === null ? ok(null) : parseDecimal(limits.max_amount);
  if (value.isErr() || min.isErr() || max.isErr()) return "malformed";
  if (compareDecimal(value.value, min.value) < 0) return "below_min";
  if (max.value !== null && compareDecimal(value.value, max.value) > 0) return "above_max";
  return "within";
}

export function isWithinLimits(amount: string | Decimal, limits: AmountLimits): boolean {
  return checkLimits(amount, limits) === "within";
}
