// The sandbox's Decimal: one configured clone of decimal.js, so every money and
// rate computation shares the same precision and rounding.
import Decimal from "decimal.js";

export const Dec = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -30, toExpPos: 40 });
export type Dec = InstanceType<typeof Dec>;

/** Plain decimal notation without exponent and without trailing zeros. */
export function plain(d: Dec): string {
  return d.toFixed();
}
