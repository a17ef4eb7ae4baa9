// How the shopper's payment page writes the numbers a shopper reads (fiat, what arrived in the
// coin, the percentage paid): in the shopper's notation, from the stored decimal text, never
// through a float and never rounded.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatFiatAmount } from "../../app/gateway/money";
import { shownPercentage } from "../../app/payment-page/progress";
import { shopperMoney, shopperNumber, shopperPercentage } from "../../app/payment-page/shopper-money";

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

  it("writes an amount with more digits than its fiat with all of them, in the shopper's notation, and what is no plain amount as stored", () => {
    // A Spanish page writing "10.005 EUR" reads as ten thousand and five euros.
    expect(shopperMoney("10.005", "EUR", "es", "es")).toBe("10,005\u00a0€");
    expect(shopperMoney("1.5", "JPY", "en", "en")).toBe("¥1.5");
    expect(shopperMoney("49.90", "XYZ", "en", "en")).toBe("49.90 XYZ");
    expect(shopperMoney("49.90", "XYZ", "de", "de")).toBe("49,90 XYZ");
    expect(shopperMoney("1e3", "EUR", "es", "es")).toBe("1e3 EUR");
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

describe("shopperNumber", () => {
  it.each([
    ["0.0079", "en", "en", "0.0079"],
    ["0.0079", "es-ES", "es", "0,0079"],
    ["0.0079", "de", "de", "0,0079"],
    ["0.0079", "fr", "fr", "0,0079"],
    ["0.0079", "it", "it", "0,0079"],
    ["0.0079", "pt-PT", "pt", "0,0079"],
    ["0.0079", "pt-BR", "pt-BR", "0,0079"],
    ["1234.5", "de-CH", "de", "1'234.5"],
    ["12345.678901234567890123", "de", "de", "12.345,678901234567890123"],
    ["25", "en", "en", "25"],
  ])("%s for %s reads as the shopper writes it, with the digits it came with", (value, locale, language, expected) => {
    expect(shopperNumber(value, locale, language as "en")).toBe(expected);
  });

  it("shows what is no plain decimal as stored", () => {
    for (const value of ["", "1e-8", "-0.5", "0,5", "abc"]) expect(shopperNumber(value, "es", "es")).toBe(value);
  });

  it("writes every digit of any coin amount exactly, in every notation", () => {
    const amounts = fc
      .tuple(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.stringMatching(/^\d{0,18}$/))
      .map(([whole, fraction]) => (fraction ? `${whole}.${fraction}` : `${whole}`));
    fc.assert(
      fc.property(amounts, fc.constantFrom("en", "es-ES", "de-CH", "pt-BR", "fr-CA", "it"), (amount, locale) => {
        const language = (locale === "pt-BR" ? locale : locale.slice(0, 2)) as "en";
        const digitsOnly = (text: string) => text.replace(/\D/g, "");
        expect(digitsOnly(shopperNumber(amount, locale, language))).toBe(digitsOnly(amount));
      }),
    );
  });
});

describe("shopperPercentage", () => {
  it.each([
    ["50.0", "en", "en", "50.0%"],
    ["50.0", "es", "es", "50,0\u00a0%"],
    ["50.0", "de", "de", "50,0\u00a0%"],
    ["99.99", "it", "it", "99,99%"],
    ["100.0", "pt-BR", "pt-BR", "100,0%"],
    ["5", "en", "en", "5%"],
    ["0.5", "fr", "fr", "0,5\u00a0%"],
  ])("%s for %s reads as the shopper writes it, with the gateway's digits", (value, locale, language, expected) => {
    // Spaces before "%" differ between ICU versions (no-break or narrow no-break).
    expect(shopperPercentage(value, locale, language as "en").replace(/[\u00a0\u202f]/g, "\u00a0")).toBe(expected);
  });

  it("shows what is no plain decimal as stored", () => {
    expect(shopperPercentage("n/a", "es", "es")).toBe("n/a %");
  });

  it("writes a float's tail to two decimals, cut down, so a payment one unit short never reads 100", () => {
    expect(shopperPercentage("33.333333333333336", "en", "en")).toBe("33.33%");
    expect(shopperPercentage("99.99999", "es", "es").replace(/[\u00a0\u202f]/g, "\u00a0")).toBe("99,99\u00a0%");
    expect(shopperPercentage("66.666", "de", "de").replace(/[\u00a0\u202f]/g, "\u00a0")).toBe("66,66\u00a0%");
  });

  it("writes a percentage above zero but below 0.01 as under 0.01, as the shopper writes it", () => {
    expect(shopperPercentage("0.004", "en", "en")).toBe("<0.01%");
    expect(shopperPercentage("0.0041", "es", "es").replace(/[\u00a0\u202f]/g, "\u00a0")).toBe("<0,01\u00a0%");
    expect(shopperPercentage("0.00", "en", "en")).toBe("0.00%");
  });

  it("moves no digit of the first two decimals: the gateway's percentage keeps every digit it has up to them, and none after", () => {
    const percentages = fc.tuple(fc.integer({ min: 0, max: 1000 }), fc.stringMatching(/^\d{0,6}$/)).map(([whole, fraction]) => (fraction ? `${whole}.${fraction}` : `${whole}`));
    fc.assert(
      fc.property(percentages, fc.constantFrom("en", "es", "de", "fr", "it", "pt-BR"), (value, locale) => {
        const language = locale as "en";
        const digitsOnly = (text: string) => text.replace(/\D/g, "");
        const [whole, fraction = ""] = value.split(".");
        const shown = shopperPercentage(value, locale, language);
        const under = Number(whole) === 0 && /^0{0,2}$/.test(fraction.slice(0, 2)) && /[1-9]/.test(fraction);
        expect(shown.startsWith("<")).toBe(under);
        expect(digitsOnly(shown)).toBe(under ? "001" : digitsOnly(`${whole}${fraction.slice(0, 2)}`));
      }),
    );
  });
});

describe("shownPercentage", () => {
  it.each([
    ["100.0", "100.0"],
    ["50", "50"],
    ["99.99", "99.99"],
    ["33.333333333333336", "33.33"],
    ["99.999", "99.99"],
    ["0.01", "0.01"],
    ["0.0", "0.0"],
    ["0.000", "0.00"],
    ["n/a", "n/a"],
  ])("%s is shown as %s", (value, expected) => {
    expect(shownPercentage(value)).toEqual({ value: expected, under: false });
  });

  it("a percentage above zero but below the smallest one shown is shown as under that, never as nothing paid", () => {
    expect(shownPercentage("0.005")).toEqual({ value: "0.01", under: true });
    expect(shownPercentage("0.0000001")).toEqual({ value: "0.01", under: true });
  });
});
