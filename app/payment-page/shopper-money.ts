// How the shopper's payment page writes the numbers the shopper reads: in the shopper's own
// notation ("49,90 €" in Spain, "R$ 49,90" in Brazil, "€49.90" in English; "0,0079" ETH and
// "50,0 %" in Spain, "0.0079" and "50.0%" in English), from the decimal text the database
// holds. Intl formats a numeric string exactly, with no float in between, and every digit
// given is written: fiat with its minor digits, or with all of an amount that has more (never
// rounded), a coin amount with the digits it came with, a percentage with those up to two
// decimals (a float's tail cut off). Text that does not
// read as a plain decimal is shown as stored. Values the shopper copies into a wallet are not
// written here: they stay as the gateway gave them.
import { formatMoney } from "~/admin/format";
import { isFiatCode } from "~/gateway/fiat-codes";
import { formatFiatAmount, PLAIN_DECIMAL } from "~/gateway/money";
import { languageTag, primaryLanguage, type PageLanguage } from "./language";
import { shownPercentage } from "./progress";

export function shopperMoney(amount: string, currency: string, locale: string | null | undefined, language: PageLanguage): string {
  const fixed = isFiatCode(currency) ? formatFiatAmount(amount, currency) : null;
  // With the fiat's minor digits; an amount with more keeps them all, as does a code that is no fiat's.
  const value = fixed?.isOk() ? fixed.value : PLAIN_DECIMAL.test(amount) ? amount : null;
  if (value === null) return formatMoney(amount, currency);
  const shown = isFiatCode(currency) ? written(value, locale, language, { style: "currency", currency }) : null;
  return shown ?? `${shopperNumber(value, locale, language)} ${currency}`;
}

/** An amount of a coin, or any plain decimal the shopper only reads ("0.0079" → "0,0079" in Spain), with all its digits. */
export function shopperNumber(value: string, locale: string | null | undefined, language: PageLanguage): string {
  return (PLAIN_DECIMAL.test(value) ? written(value, locale, language, {}) : null) ?? value;
}

/** The gateway's percentage paid, as stored ("50.0"), with its own digits up to two decimals (shownPercentage): "50.0%" in English, "50,0 %" in Spain; "<0.01%" for less, above zero. */
export function shopperPercentage(stored: string, locale: string | null | undefined, language: PageLanguage): string {
  const { value, under } = shownPercentage(stored);
  const digits = value.split(".")[1]?.length ?? 0;
  const shown = (PLAIN_DECIMAL.test(value) ? written(hundredths(value), locale, language, { style: "percent" }, digits) : null) ?? `${value} %`;
  return under ? `<${shown}` : shown;
}

/** "50.0" → "0.500": the percentage as the fraction Intl's percent style takes, by moving the point, so no digit changes. */
function hundredths(value: string): string {
  const [whole = "", fraction = ""] = value.split(".");
  const padded = whole.padStart(3, "0");
  return `${padded.slice(0, -2)}.${padded.slice(-2)}${fraction}`;
}

/**
 * `value` (a plain decimal) in the shopper's notation, with `digits` decimals (by default
 * those it has, so none is added or taken away); null when Intl cannot write it.
 */
function written(value: string, locale: string | null | undefined, language: PageLanguage, options: Intl.NumberFormatOptions, digits = value.split(".")[1]?.length ?? 0): string | null {
  try {
    const notation = new Intl.NumberFormat(numberLocale(locale, language), {
      ...options,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
      numberingSystem: "latn",
    });
    const shown = notation.format(value as `${number}`);
    // Intl writes a decimal string exactly up to the largest double (about 1.8e308) and "∞"
    // beyond it; such a value is shown as stored, like one with more decimals than Intl takes (it throws).
    return /[∞]|NaN/.test(shown) ? null : shown;
  } catch {
    return null;
  }
}

/**
 * The shopper's locale when the page speaks its language ("pt-BR", "de-CH": the region's own
 * separators), else the page's language alone, so a number never reads in a language the
 * page around it does not speak. A bare "pt" is Portugal's (languageTag), as the page's wording
 * is: Intl would write it as Brazil does.
 */
function numberLocale(locale: string | null | undefined, language: PageLanguage): string {
  try {
    const [canonical] = Intl.getCanonicalLocales((locale ?? "").trim().replaceAll("_", "-") || language);
    if (canonical && canonical.split("-")[0]!.toLowerCase() === primaryLanguage(language)) return languageTag(canonical);
  } catch {
    // Not a locale tag at all: the page's language decides.
  }
  return languageTag(language);
}
