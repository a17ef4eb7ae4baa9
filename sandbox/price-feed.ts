// The simulated price feed: a pure function of currency and time (a base price
// with a slow deterministic wave), so any test can recompute a rate. All money
// math is decimal.
import type { CurrencyDefinition } from "./catalogue.js";
import { Dec } from "./decimal.js";
import { fiatPerEur, type FiatCode } from "./fiat.js";

const MS_PER_HOUR = new Dec(3_600_000);
const TWO_PI = Dec.acos(-1).times(2);

/** Price of one coin in EUR at the given instant. */
export function priceInEur(def: CurrencyDefinition, at: Date): Dec {
  const hours = new Dec(at.getTime()).div(MS_PER_HOUR);
  const angle = hours.div(def.wavePeriodHours).times(TWO_PI).plus(def.wavePhase);
  const wave = new Dec(def.waveAmplitude).times(Dec.sin(angle));
  return new Dec(def.basePriceEur).times(wave.plus(1));
}

/** The rate quoted in an order: price of one coin in the order's fiat. */
export function rateInFiat(def: CurrencyDefinition, fiat: FiatCode, at: Date): Dec {
  const price = priceInEur(def, at).times(fiatPerEur(fiat));
  return price.gte(1) ? price.toDecimalPlaces(2, Dec.ROUND_HALF_UP) : price.toSignificantDigits(6, Dec.ROUND_HALF_UP);
}

/** The crypto amount to pay: fiat amount / rate, rounded up to the coin's precision. */
export function expectedInputAmount(fiatAmount: Dec, rate: Dec, decimals: number): Dec {
  return fiatAmount.div(rate).toDecimalPlaces(decimals, Dec.ROUND_UP);
}
