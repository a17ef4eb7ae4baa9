// Which language the shopper's payment page speaks: the payment's Shopify locale
// ("es", "pt-BR", "fr-CA"...) reduced to one of the page's six languages, English otherwise.
export const PAGE_LANGUAGES = ["en", "es", "pt", "it", "fr", "de"] as const;
export type PageLanguage = (typeof PAGE_LANGUAGES)[number];

export function pageLanguage(locale: string | null | undefined): PageLanguage {
  const primary = (locale ?? "").trim().toLowerCase().split(/[-_]/)[0] ?? "";
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
      return { primary: tag.toLowerCase().split(/[-_]/)[0] ?? "", weight: Number.isFinite(weight) ? weight : 0, index };
    })
    .filter(({ primary, weight }) => (PAGE_LANGUAGES as readonly string[]).includes(primary) && weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  return asked[0] ? pageLanguage(asked[0].primary) : "en";
}
