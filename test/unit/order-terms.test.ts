// Whether a gateway order is for its payment's fiat and amount (orderTermsMismatch): the same
// amount in the fiat's minor units, written any way a JSON number may carry it (trailing zeros,
// a float's noise), is the payment's; a minor unit more or less, or another fiat, is not.
import Decimal from "decimal.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FIAT_CODES, fiatMinorDigits, type FiatCode } from "../../app/gateway/fiat-codes";
import { orderTermsMismatch } from "../../app/payments/order-terms";

const fiat = fc.constantFrom(...FIAT_CODES);
/** An amount in a fiat's minor units, as the payment stores it (formatted with the fiat's digits). */
const minorUnits = fc.bigInt({ min: 1n, max: 10n ** 12n });
const stored = (units: bigint, code: FiatCode) => new Decimal(units.toString()).div(10 ** fiatMinorDigits(code)).toFixed(fiatMinorDigits(code));

describe("orderTermsMismatch", () => {
  it("takes the payment's own amount with trailing zeros or float noise under half a minor unit as that amount", () => {
    fc.assert(
      fc.property(fiat, minorUnits, fc.integer({ min: -4_999, max: 4_999 }), (code, units, noise) => {
        const amount = stored(units, code);
        // The noise: up to 0.4999 of a minor unit, far past the digits a float prints.
        const shown = new Decimal(amount).plus(new Decimal(noise).div(10_000).div(10 ** fiatMinorDigits(code))).toFixed();
        expect(orderTermsMismatch({ fiat: code, fiat_amount: shown }, { amount, currency: code })).toBeNull();
        const trailingZeros = amount.includes(".") ? `${amount}000` : `${amount}.000`;
        expect(orderTermsMismatch({ fiat: code, fiat_amount: trailingZeros }, { amount, currency: code })).toBeNull();
      }),
    );
  });

  it("names both amounts when they differ by a minor unit or more", () => {
    fc.assert(
      fc.property(fiat, minorUnits, fc.bigInt({ min: 1n, max: 10n ** 6n }), fc.boolean(), (code, units, by, down) => {
        fc.pre(!down || units > by);
        const amount = stored(units, code);
        const other = stored(down ? units - by : units + by, code);
        expect(orderTermsMismatch({ fiat: code, fiat_amount: other }, { amount, currency: code })).toBe(`The gateway order is for ${other} ${code}, but Shopify's payment is for ${amount} ${code}.`);
      }),
    );
  });

  it("tells another fiat apart, with or without the order's amount", () => {
    expect(orderTermsMismatch({ fiat: "MXN" }, { amount: "49.90", currency: "EUR" })).toBe("The gateway order is in MXN, but Shopify's payment is for 49.90 EUR.");
    expect(orderTermsMismatch({ fiat: "MXN", fiat_amount: "49.9" }, { amount: "49.90", currency: "EUR" })).toBe("The gateway order is for 49.9 MXN, but Shopify's payment is for 49.90 EUR.");
    expect(orderTermsMismatch({ fiat: "EUR" }, { amount: "49.90", currency: "eur" })).toBeNull();
    expect(orderTermsMismatch({ fiat: "JPY", fiat_amount: "5000.4" }, { amount: "5000", currency: "JPY" })).toBeNull();
    expect(orderTermsMismatch({ fiat: "JPY", fiat_amount: "5000.5" }, { amount: "5000", currency: "JPY" })).toBe("The gateway order is for 5001 JPY, but Shopify's payment is for 5000 JPY.");
  });
});
