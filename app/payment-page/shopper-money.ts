// How the shopper's payment page writes an amount of fiat: in the shopper's own notation
// ("49,90 €" in Spain, "R$ 49,90" in Brazil, "€49.90" in English), from the decimal text the
// database holds. Intl formats a numeric string exactly, with no float in between, and the
// digits shown are the fiat's minor digits: an amount that has more is not rounded but shown
// as stored, as is anything Intl cannot write ("49.90 EUR").
import { formatMoney } from "~/admin/format";
import { isFiatCode } from "~/gateway/fiat-codes";
import { formatFiatAmount } from "~/gateway/money";
import { primaryLanguage, type PageLanguage } from "./language";

export function shopperMoney(amount: string, currency: string, locale: string | null | undefined, language: PageLanguage): string {
  const fixed = isFiatCode(currency) ? formatFiatAmount(amount, currency) : null;
  if (!fixed || fixed.isErr()) return formatMoney(amount, currency);
  const digits = fixed.value.split(".")[1]?.length ?? 0;
  try {
    const notation = new Intl.NumberFormat(numberLocale(locale, language), {
      style: "currency",
      currency,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
      numberingSystem: "latn",
    });
    return notation.format(fixed.value as `${number}`);
  } catch {
    return formatMoney(amount, currency);
  }
}

/**
 * The shopper's locale when the page speaks its language ("pt-BR", "de-CH": the region's own
 * separators), else the page's language alone, so the amount never reads in a language the
 * page around it does not speak.
 */
function numberLocale(locale: string | null | undefined, language: PageLanguage): string {
  try {
    const [canonical] = Intl.getCanonicalLocales((locale ?? "").trim().replaceAll("_", "-") || language);
    if (canonical && canonical.split("-")[0]!.toLowerCase() === primaryLanguage(language)) return regional(canonical);
  } catch {
    // Not a locale tag at all: the page's language decides.
  }
  return regional(language);
}

/** Intl writes a bare "pt" as Brazil does; the page's "pt" is Portugal's, wording and notation. */
function regional(locale: string): string {
  return locale === "pt" ? "pt-PT" : locale;
}
