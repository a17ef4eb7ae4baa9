// The fiat currencies the gateway accepts and the sandbox's simulated exchange
// rates against EUR (fixed, so conversions are reproducible). Currency limits
// are kept in EUR and converted into an order's fiat with these rates.
import { Dec } from "./decimal.js";

export const FIAT_CODES = [
  "EUR", "USD", "GBP", "ARS", "AUD", "BGN", "BOB", "BRL", "CAD", "CHF", "CLP", "COP", "DKK", "DOP", "GEL",
  "HUF", "ISK", "JPY", "KRW", "MXN", "NOK", "NZD", "PEN", "PLN", "PYG", "RON", "SEK", "SGD", "SVC", "UYU",
] as const;

export type FiatCode = (typeof FIAT_CODES)[number];

export const DEFAULT_FIAT: FiatCode = "MXN";

/** Units of each fiat per 1 EUR. */
const PER_EUR: Record<FiatCode, string> = {
  EUR: "1", USD: "1.08", GBP: "0.85", ARS: "950", AUD: "1.65", BGN: "1.9558", BOB: "7.47", BRL: "5.40",
  CAD: "1.47", CHF: "0.95", CLP: "1000", COP: "4300", DKK: "7.46", DOP: "64", GEL: "2.90", HUF: "395",
  ISK: "150", JPY: "165", KRW: "1450", MXN: "19.50", NOK: "11.60", NZD: "1.80", PEN: "4.05", PLN: "4.30",
  PYG: "8200", RON: "4.97", SEK: "11.40", SGD: "1.45", SVC: "9.45", UYU: "43",
};

export function isFiatCode(code: string): code is FiatCode {
  return (FIAT_CODES as readonly string[]).includes(code);
}

export function fiatPerEur(code: FiatCode): Dec {
  return new Dec(PER_EUR[code]);
}

/** An EUR amount expressed in the given fiat, to the cent. */
export function eurToFiat(amountEur: Dec, code: FiatCode): Dec {
  return amountEur.times(fiatPerEur(code)).toDecimalPlaces(2, Dec.ROUND_HALF_UP);
}
