// How the shopper's payment page writes fiat: in the shopper's notation, from the stored
// decimal text, never through a float and never rounded.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatFiatAmount } from "../../app/gateway/money";
import { shopperMoney } from "../../app/payment-page/shopper-money";

describe("shopperMoney", () => {
  it.each([
    ["49.90", "EUR", "en", "en", "€49.90"],
    ["49.9", "EUR", "es-ES", "es", "49,90 €"],
    ["1234.5", "EUR", "de", "de", "1.234,50 €"],
    ["49.9", "CHF", "de-CH", "de", "CHF 49.90"],
    ["49.90", "BRL", "pt-BR", "pt-BR", "R$ 49,90"],
    ["49.90", "EUR", "pt-PT", "pt", "49,90 €"],
    ["1234.5", "EUR", "pt", "pt", "1234,50 €"],
    ["1234.5", "EUR", null, "pt", "1234,50 €"],
    ["49.90", "USD", "en-US", "en", "$49.90"],
    ["5000", "JPY", "en", "en", "¥5,000"],
    ["49.90", "CAD", "fr-CA", "fr", "49,90 $"],
  ])("%s %s for %s reads as the shopper writes it", (amount, currency, locale, language, expected) => {
    expect(shopperMoney(amount, currency, locale, language as "en")).toBe(expected.replace(/ /g, "\u00a0"));
  });

  it("keeps the page's language for the notation when the shopper's locale is one the page does not speak", () => {
    // Arabic would write other digits and separators around an English page.
    expect(shopperMoney("49.90", "EUR", "ar-EG", "en")).toBe("€49.90");
    expect(shopperMoney("49.90", "EUR", "not a locale!", "es")).toBe("49,90\u00a0€");
    expect(shopperMoney("49.90", "EUR", null, "fr")).toBe("49,90\u00a0€");
  });

  it("shows an amount with more digits than its fiat, or anything else it cannot write, as stored", () => {
    expect(shopperMoney("10.005", "EUR", "es", "es")).toBe("10.005 EUR");
    expect(shopperMoney("1.5", "JPY", "en", "en")).toBe("1.5 JPY");
    expect(shopperMoney("49.90", "XYZ", "en", "en")).toBe("49.90 XYZ");
  });

  it("writes every digit of any amount exactly, however large, in every notation", () => {
    const amounts = fc
      .tuple(fc.bigInt({ min: 0n, max: 10n ** 18n }), fc.integer({ min: 0, max: 99 }))
      .map(([units, cents]) => `${units}.${String(cents).padStart(2, "0")}`);
    fc.assert(
      fc.property(amounts, fc.constantFrom("en", "es-ES", "de-CH", "pt-BR", "fr-CA", "it"), (amount, locale) => {
        const language = (locale === "pt-BR" ? locale : locale.slice(0, 2)) as "en";
        const shown = shopperMoney(amount, "EUR", locale, language);
        const digitsOnly = (text: string) => text.replace(/\D/g, "");
        expect(digitsOnly(shown)).toBe(digitsOnly(formatFiatAmount(amount, "EUR")._unsafeUnwrap()));
      }),
    );
  });
});
