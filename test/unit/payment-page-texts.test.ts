// The shopper's texts in every language of the payment page: each language has its own
// wording for every text (no English left behind, apart from words and notations the languages share),
// with the same {placeholders} as the English; the header's label for the payment's amount
// never calls it due.
import { describe, expect, it } from "vitest";
import { acceptedLanguage, PAGE_LANGUAGES, pageLanguage } from "../../app/payment-page/language";
import { PAGE_TEXTS, type PageTexts } from "../../app/payment-page/texts";
import { STILL_TO_PAY } from "../support/still-to-pay";

/** Every text as "path = value". */
function leaves(texts: PageTexts): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (value: unknown, path: string) => {
    if (typeof value === "string") out.set(path, value);
    else for (const [key, inner] of Object.entries(value as Record<string, unknown>)) walk(inner, path ? `${path}.${key}` : key);
  };
  walk(texts, "");
  return out;
}

/** The same word, or notation, in English and in the language. */
const SHARED_WORDS = new Set(["Memo", "Note", "Status", "{label}: {value}"]);

describe("the payment page's texts", () => {
  const english = leaves(PAGE_TEXTS.en);

  it.each(PAGE_LANGUAGES.filter((language) => language !== "en"))("%s has its own wording for every text, with the English placeholders", (language) => {
    const texts = leaves(PAGE_TEXTS[language]);
    expect([...texts.keys()]).toEqual([...english.keys()]);
    const untranslated = [...texts].filter(([path, value]) => value === english.get(path) && !SHARED_WORDS.has(value)).map(([path]) => path);
    expect(untranslated).toEqual([]);
    const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const [path, value] of texts) expect(placeholders(value), path).toEqual(placeholders(english.get(path)!));
  });
});

describe("the payment page's header", () => {
  // After a partial payment only the rest is due, asked for below in the coin: a header that
  // calls the whole amount due gives the shopper two different amounts to pay.
  it.each(PAGE_LANGUAGES)("%s labels the payment's whole amount as such, never as an amount still to pay", (language) => {
    expect(PAGE_TEXTS[language].paymentAmount).not.toMatch(STILL_TO_PAY[language]);
  });
});

describe("the payment page's language", () => {
  it("is the locale's language, Brazil's Portuguese for a Brazilian locale, English for one the page does not speak", () => {
    const cases: [string | null, string][] = [
      ["es", "es"],
      ["fr-CA", "fr"],
      ["pt-BR", "pt-BR"],
      ["pt_br", "pt-BR"],
      ["PT-BR", "pt-BR"],
      ["pt-PT", "pt"],
      ["pt", "pt"],
      ["pt-AO", "pt"],
      ["ja", "en"],
      [null, "en"],
    ];
    for (const [locale, language] of cases) expect(pageLanguage(locale), String(locale)).toBe(language);
  });

  it("is the browser's first language the page speaks, by weight, with its region where that decides", () => {
    expect(acceptedLanguage("pt-BR,pt;q=0.9,en;q=0.8")).toBe("pt-BR");
    expect(acceptedLanguage("pt-PT,pt;q=0.9")).toBe("pt");
    expect(acceptedLanguage("ja,pt-br;q=0.5,de;q=0.4")).toBe("pt-BR");
    expect(acceptedLanguage("de-CH,de;q=0.9,en;q=0.8")).toBe("de");
    expect(acceptedLanguage("ja")).toBe("en");
  });
});
