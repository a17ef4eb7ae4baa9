// The shopper's words in each language: the payment method's name at Shopify's checkout
// (buyer_label and its translations in the payments extension), the first text a shopper
// reads, is translated for every language the payment page speaks, Portugal's Portuguese
// apart from Brazil's; and Portugal's texts read as Portugal writes.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PAGE_LANGUAGES, pageLanguage } from "../../app/payment-page/language";
import { PAGE_TEXTS } from "../../app/payment-page/texts";

describe("the checkout's label for the payment method", () => {
  it("has a translation for every language the payment page speaks, Portugal's Portuguese included", () => {
    const toml = readFileSync("extensions/crypto-payments/shopify.extension.toml", "utf8");
    const block = /buyer_label_translations\s*=\s*\[([\s\S]*?)\]/.exec(toml)?.[1] ?? "";
    const locales = [...block.matchAll(/locale\s*=\s*"([^"]+)"/g)].map((m) => m[1]!);
    const covered = new Set(["en", ...locales.map((locale) => pageLanguage(locale))]);
    const missing = PAGE_LANGUAGES.filter((language) => !covered.has(language));
    // A shopper in Portugal (PT is a supported country) gets the page in European Portuguese but
    // the checkout's label only in English, or in Brazil's "Pague com criptomoedas".
    expect(missing).toEqual([]);
  });
});

describe("pt (Portugal) texts", () => {
  it("openInWallet treats 'app' as feminine, as Portugal does ('numa app'), not as Brazil does ('num app')", () => {
    // In Portugal "app" is feminine ("a app", "numa app"); "um app" / "num app" is Brazilian usage,
    // which the pt-BR text rightly has ("Abrir em um app de carteira").
    expect(PAGE_TEXTS.pt.openInWallet).not.toMatch(/\bnum app\b/);
    expect(PAGE_TEXTS.pt.openInWallet).toBe("Abrir numa app de carteira");
  });
});
