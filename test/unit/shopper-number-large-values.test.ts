// What arrived in the coin and the percentage paid are written digit for digit in the page's
// notation, whatever their size: a plain decimal is never shown as a symbol that stands for no
// amount ("∞"), it keeps every digit it has, or it is shown as stored.
import { describe, expect, it } from "vitest";
import { shopperMoney, shopperNumber, shopperPercentage } from "../../app/payment-page/shopper-money";

const digitsOnly = (text: string) => text.replace(/\D/g, "");

describe("numbers with more digits than a float can hold", () => {
  // 400 integer digits: beyond the largest double (about 1.8e308).
  const huge = `${"9".repeat(400)}.5`;

  it("a coin amount keeps all its digits, in every page language", () => {
    for (const [locale, language] of [["en", "en"], ["es", "es"], ["de", "de"], ["fr", "fr"]] as const) {
      const shown = shopperNumber(huge, locale, language);
      expect(shown, `${locale}: ${shown.slice(0, 20)}…`).not.toContain("∞");
      expect(digitsOnly(shown)).toBe(digitsOnly(huge));
    }
  });

  it("a percentage keeps all its digits", () => {
    const shown = shopperPercentage(huge, "es", "es");
    expect(shown).not.toContain("∞");
    expect(digitsOnly(shown)).toBe(digitsOnly(huge));
  });

  it("an amount of a code that is no fiat's keeps all its digits", () => {
    const shown = shopperMoney(huge, "USDT", "de", "de");
    expect(shown).not.toContain("∞");
    expect(digitsOnly(shown)).toBe(digitsOnly(huge));
  });
});
