// How the admin writes money: a fiat amount with its currency's minor digits, anything else
// as stored, and never rounded.
import { describe, expect, it } from "vitest";
import { formatMoney } from "../../app/admin/format";

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
