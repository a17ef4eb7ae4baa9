// The shopper's texts in every language of the payment page: each language has its own
// wording for every text (no English left behind, apart from words the languages share),
// with the same {placeholders} as the English.
import { describe, expect, it } from "vitest";
import { PAGE_LANGUAGES } from "../../app/payment-page/language";
import { PAGE_TEXTS, type PageTexts } from "../../app/payment-page/texts";

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

/** The same word in English and in the language. */
const SHARED_WORDS = new Set(["Memo", "Note", "Status"]);

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
