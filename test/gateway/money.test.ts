import Decimal from "decimal.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FIAT_CODES } from "../../app/gateway/fiat-codes";
import { checkLimits, compareDecimal, fiatMinorDigits, formatFiatAmount, isWithinLimits, parseDecimal, receivedFiatShown } from "../../app/gateway/money";

function decimal(text: string): Decimal {
  return parseDecimal(text)._unsafeUnwrap();
}

describe("parseDecimal", () => {
  it("adds 0.1 and 0.2 to exactly 0.3, where floats do not", () => {
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(decimal("0.1").plus(decimal("0.2")).equals(decimal("0.3"))).toBe(true);
  });

  it("refuses anything but plain decimal text", () => {
    for (const bad of ["1e3", "1,5", " 1", "1 ", "+1", ".5", "5.", "01", "0x10", "Infinity", "NaN", ""]) {
      expect(parseDecimal(bad).isErr(), bad).toBe(true);
    }
    expect(parseDecimal("-0.5").isOk()).toBe(true);
  });
});

describe("fiat minor units", () => {
  it.each(["JPY", "KRW", "CLP", "ISK", "PYG"] as const)("%s has no decimals", (fiat) => {
    expect(fiatMinorDigits(fiat)).toBe(0);
  });

  it("every other listed fiat has 2", () => {
    const zero = new Set(["JPY", "KRW", "CLP", "ISK", "PYG"]);
    expect(FIAT_CODES).toHaveLength(30);
    for (const fiat of FIAT_CODES) expect(fiatMinorDigits(fiat)).toBe(zero.has(fiat) ? 0 : 2);
  });
});

describe("formatFiatAmount", () => {
  it("refuses 1.005 EUR instead of rounding it (floats would print 1.00)", () => {
    expect((1.005).toFixed(2)).toBe("1.00");
    const result = formatFiatAmount("1.005", "EUR");
    expect(result.isErr()).toBe(true);
    expect(result._unsafeUnwrapErr().kind).toBe("too_many_decimals");
  });

  it("pads to the fiat's digits", () => {
    expect(formatFiatAmount("10.5", "EUR")._unsafeUnwrap()).toBe("10.50");
    expect(formatFiatAmount("10", "USD")._unsafeUnwrap()).toBe("10.00");
    expect(formatFiatAmount(decimal("0.1").plus(decimal("0.2")), "EUR")._unsafeUnwrap()).toBe("0.30");
  });

  it("zero-decimal fiats take whole amounts only", () => {
    expect(formatFiatAmount("1500", "JPY")._unsafeUnwrap()).toBe("1500");
    expect(formatFiatAmount("1500.00", "KRW")._unsafeUnwrap()).toBe("1500");
    expect(formatFiatAmount("1500.5", "CLP").isErr()).toBe(true);
  });

  it("a malformed amount is an error, not NaN", () => {
    expect(formatFiatAmount("abc", "EUR")._unsafeUnwrapErr().kind).toBe("malformed_decimal");
  });

  it("never changes the value it formats", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.constantFrom(...FIAT_CODES), (minor, fiat) => {
        const digits = fiatMinorDigits(fiat);
        const text = digits === 0 ? minor.toString() : `${minor / 100n}.${String(minor % 100n).padStart(2, "0")}`;
        const formatted = formatFiatAmount(text, fiat)._unsafeUnwrap();
        return decimal(formatted).equals(decimal(text)) && formatted === text;
      }),
    );
  });
});

describe("limits", () => {
  const limited = { min_amount: "10.00", max_amount: "1200.00" };
  const unlimited = { min_amount: "1.00", max_amount: null };

  it("are inclusive at both ends", () => {
    expect(isWithinLimits("10.00", limited)).toBe(true);
    expect(isWithinLimits("10", limited)).toBe(true);
    expect(isWithinLimits("1200.00", limited)).toBe(true);
    expect(checkLimits("9.99", limited)).toBe("below_min");
    expect(checkLimits("1200.01", limited)).toBe("above_max");
  });

  it("compare as decimals, not as text or floats", () => {
    expect(isWithinLimits("9.999999999999999999", limited)).toBe(false);
    expect(isWithinLimits("1200.000000000000000001", limited)).toBe(false);
    expect(isWithinLimits("100", limited)).toBe(true); // "100" < "1200.00" but > "10.00" as text too; value matters
    expect(isWithinLimits("2", { min_amount: "10", max_amount: null })).toBe(false); // "2" > "10" as text
    // the float sum 0.1 + 0.2 prints as 0.30000000000000004, which is above a 0.3 limit
    expect(checkLimits(String(0.1 + 0.2), { min_amount: "0.01", max_amount: "0.3" })).toBe("above_max");
    expect(checkLimits(decimal("0.1").plus(decimal("0.2")), { min_amount: "0.01", max_amount: "0.3" })).toBe("within");
  });

  it("null max_amount means no upper limit", () => {
    expect(isWithinLimits("99999999999999999999.99", unlimited)).toBe(true);
    expect(checkLimits("0.99", unlimited)).toBe("below_min");
  });

  it("malformed input is never within limits", () => {
    expect(checkLimits("ten", limited)).toBe("malformed");
    expect(isWithinLimits("50", { min_amount: "x", max_amount: null })).toBe(false);
  });

  it("compareDecimal agrees with integer comparison of scaled values", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), (a, b) => {
        const toText = (v: bigint) => {
          const sign = v < 0n ? "-" : "";
          const abs = v < 0n ? -v : v;
          return `${sign}${abs / 10000n}.${String(abs % 10000n).padStart(4, "0")}`;
        };
        const expected = a < b ? -1 : a > b ? 1 : 0;
        return compareDecimal(decimal(toText(a)), decimal(toText(b))) === expected;
      }),
    );
  });
});

describe("receivedFiatShown: the gateway's float of fiat received, as a person reads it", () => {
  it.each([
    ["24.499999999999996", "EUR", "24.50"],
    ["24.5", "EUR", "24.50"],
    ["0.125", "USD", "0.12"],
    ["0.135", "USD", "0.14"],
    ["3999.5000000000005", "JPY", "4000"],
    // What it cannot read, or a code that is no fiat's, as it is.
    ["1e-7", "EUR", "1e-7"],
    ["24.499999999999996", "XYZ", "24.499999999999996"],
  ])("%s %s reads %s (the fiat's minor digits, half to even)", (amount, currency, shown) => {
    expect(receivedFiatShown(amount, currency)).toBe(shown);
  });
});
