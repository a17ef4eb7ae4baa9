// Which language the shopper's payment page speaks: the payment's Shopify locale
// ("es", "pt-BR", "fr-CA"...) reduced to one of the page's languages, English otherwise.
// Portuguese has two: Brazil's for a Brazilian locale, Portugal's for any other.
export const PAGE_LANGUAGES = ["en", "es", "pt", "pt-BR", "it", "fr", "de"] as const;
export type PageLanguage = (typeof PAGE_LANGUAGES)[number];

/** The language's own subtag ("pt" of "pt-BR"). */
export function primaryLanguage(language: PageLanguage): string {
  return language.split("-")[0]!;
}

/** The language as a document's lang attribute declares it: the page's "pt" is Portugal's Portuguese ("pt-PT"). */
export function languageTag(language: string): string {
  return language === "pt" ? "pt-PT" : language;
}

export function pageLanguage(locale: string | null | undefined): PageLanguage {
  const [primary = "", region = ""] = (locale ?? "").trim().toLowerCase().split(/[-_]/);
  if (primary === "pt" && region === "br") return "pt-BR";
  return (PAGE_LANGUAGES as readonly string[]).includes(primary) ? (primary as PageLanguage) : "en";
}

/**
 * The first of the page's languages a browser asks for in its Accept-Language header
 * ("de-CH,de;q=0.9,en;q=0.8"), English otherwise: for a page shown before any payment is known.
 */
export function acceptedLanguage(header: string | null | undefined): PageLanguage {
  const asked = (header ?? "")
    .split(",")
    .slice(0, 20)
    .map((part, index) => {
      const [tag = "", ...parameters] = part.split(";").map((piece) => piece.trim());
      const q = parameters.find((parameter) => parameter.startsWith("q="));
      const weight = q ? Number(q.slice(2)) : 1;
      return { tag, primary: tag.toLowerCase().split(/[-_]/)[0] ?? "", weight: Number.isFinite(weight) ? weight : 0, index };
    })
    .filter(({ primary, weight }) => (PAGE_LANGUAGES as readonly string[]).includes(primary) && weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  return asked[0] ? pageLanguage(asked[0].tag) : "en";
}
