// How each language of the shopper's pages says an amount is still to be paid: the words the
// payment page's header must not use for the payment's whole amount.
import type { PageLanguage } from "../../app/payment-page/language";

export const STILL_TO_PAY: Record<PageLanguage, RegExp> = {
  en: /\b(due|to pay|owed)\b/i,
  es: /a pagar|pendiente|debid/i,
  pt: /a pagar|em falta|devid/i,
  "pt-BR": /a pagar|falta|devid/i,
  it: /da pagare|dovut/i,
  fr: /à payer|dû|restant/i,
  de: /zu zahlen|fällig|offen/i,
};
