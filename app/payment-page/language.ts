// Which language the shopper's payment page speaks: the payment's Shopify locale
// ("es", "pt-BR", "fr-CA"...) reduced to one of the page's six languages, English otherwise.
export const PAGE_LANGUAGES = ["en", "es", "pt", "it", "fr", "de"] as const;
export type PageLanguage = (typeof PAGE_LANGUAGES)[number];

export function pageLanguage(locale: string | null | undefined): PageLanguage {
  const primary = (locale ?? "").trim().toLowerCase().split(/[-_]/)[0] ?? "";
  return (PAGE_LANGUAGES as readonly string[]).includes(primary) ? (primary as PageLanguage) : "en";
}
