// How the admin writes money: a fiat amount with its currency's minor digits, anything else
// as stored, and never rounded. And the gateway's percentage paid, to two decimals at most.
import { describe, expect, it } from "vitest";
import { formatMoney, formatPercentage } from "../../app/admin/format";

describe("formatMoney", () => {
  it("writes a fiat amount with its currency's minor digits", () => {
    expect(formatMoney("49.9", "EUR")).toBe("49.90 EUR");
    expect(formatMoney("49.90", "EUR")).toBe("49.90 EUR");
    expect(formatMoney("100", "USD")).toBe("100.00 USD");
    expect(formatMoney("5000", "JPY")).toBe("5000 JPY");
    expect(formatMoney("5000.0", "JPY")).toBe("5000 JPY");
    expect(formatMoney("120000", "KRW")).toBe("120000 KRW");
  });

  it("never rounds: more digits than the fiat has, or a coin amount, read as stored", () => {
    expect(formatMoney("49.905", "EUR")).toBe("49.905 EUR");
    expect(formatMoney("2500.5", "JPY")).toBe("2500.5 JPY");
    expect(formatMoney("0.00078199", "BTC")).toBe("0.00078199 BTC");
    expect(formatMoney("12.5", null)).toBe("12.5");
  });

  it("writes a dash for no amount", () => {
    expect(formatMoney(null, "EUR")).toBe("—");
    expect(formatMoney("", "EUR")).toBe("—");
  });
});

describe("formatPercentage", () => {
  it("writes the gateway's percentage with its digits, a float's tail cut to two decimals (never up to 100)", () => {
    expect(formatPercentage("100.0")).toBe("100.0%");
    expect(formatPercentage("50")).toBe("50%");
    expect(formatPercentage("33.333333333333336")).toBe("33.33%");
    expect(formatPercentage("99.999")).toBe("99.99%");
    expect(formatPercentage("0.004")).toBe("<0.01%");
    expect(formatPercentage("0.00")).toBe("0.00%");
    expect(formatPercentage(null)).toBe("—");
  });
});
