// A customer's e-mail as the app keeps it: trimmed and in lower case. Shopify's privacy
// webhooks name a customer by the e-mail of their Shopify account, which may differ in case
// from what they typed at checkout; every provider in use treats the two as one address, so
// payments and data requests are stored, and looked up, by this one form.
export function customerEmailKey(email: string | null | undefined): string | null {
  const key = email?.trim().toLowerCase();
  return key ? key : null;
}

// A customer's phone as the app keeps it: its digits alone, after a "+" when it is written
// with its country code: "+34 611 222 333", "(+34) 611 222 333" and "0034 611 222 333" are all
// "+34611222333" ("00" is the international prefix where E.164's "+" is not typed). Shopify's
// privacy webhooks name a customer by their record's phone (E.164), which may be written
// otherwise than the phone typed at checkout; payments are stored, and looked up, by this form.
export function customerPhoneKey(phone: string | null | undefined): string | null {
  const text = phone?.trim() ?? "";
  const digits = text.replace(/\D/g, "");
  if (!digits) return null;
  if (/^[^0-9]*\+/.test(text)) return `+${digits}`;
  return digits.startsWith("00") && digits.length > 2 ? `+${digits.slice(2)}` : digits;
}

/**
 * The key an earlier release gave the same phone, when it differs: it kept a leading "00" as
 * typed ("0034611222333"), and such keys are still stored. (One release also keyed
 * "(+34) 611 222 333" as "34611222333"; those are not looked up: the same digits are another
 * country's number typed without its code, "(34) 61122-2333" in Brazil, and a lookup by them
 * would hand a stranger's details to a data request or erase them.)
 */
export function earlierPhoneKeys(key: string | null): string[] {
  return key?.startsWith("+") ? [`00${key.slice(1)}`] : [];
}

/** A payment's customer fields, erased: by a customer's redaction, or once their retention ran out. */
export const NO_CUSTOMER_FIELDS = { customerEmail: null, customerName: null, customerPhone: null, billingAddress: null } as const;
