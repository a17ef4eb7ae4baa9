// Owns the gateway's list of accepted fiat currencies and how many minor-unit
// digits each one has (what a payable amount may carry after the point).

export const FIAT_CODES = [
  "EUR", "USD", "GBP", "ARS", "AUD", "BGN", "BOB", "BRL", "CAD", "CHF",
  "CLP", "COP", "DKK", "DOP", "GEL", "HUF", "ISK", "JPY", "KRW", "MXN",
  "NOK", "NZD", "PEN", "PLN", "PYG", "RON", "SEK", "SGD", "SVC", "UYU",
] as const;

export type FiatCode = (typeof FIAT_CODES)[number];

/** The gateway's default when a request names no fiat. */
export const DEFAULT_FIAT: FiatCode = "MXN";

const ZERO_DECIMAL_FIATS: ReadonlySet<FiatCode> = new Set<FiatCode>(["JPY", "KRW", "CLP", "ISK", "PYG"]);

export function fiatMinorDigits(fiat: FiatCode): 0 | 2 {
  return ZERO_DECIMAL_FIATS.has(fiat) ? 0 : 2;
}

const FIAT_SET: ReadonlySet<string> = new Set(FIAT_CODES);

export function isFiatCode(value: string): value is FiatCode {
  return FIAT_SET.has(value);
}
