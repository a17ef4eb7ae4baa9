// A customer's e-mail as the app keeps it: trimmed and in lower case. Shopify's privacy
// webhooks name a customer by the e-mail of their Shopify account, which may differ in case
// from what they typed at checkout; every provider in use treats the two as one address, so
// payments and data requests are stored, and looked up, by this one form.
export function customerEmailKey(email: string | null | undefined): string | null {
  const key = email?.trim().toLowerCase();
  return key ? key : null;
}

// A customer's phone as the app keeps it: its digits alone, after a "+" if it starts with one
// ("+34 611 222 333" and "+34611222333" are one number). Shopify's privacy webhooks name a
// customer by their record's phone (E.164), which may be written otherwise than the phone
// typed at checkout; payments are stored, and looked up, by this one form.
export function customerPhoneKey(phone: string | null | undefined): string | null {
  const text = phone?.trim();
  const digits = text?.replace(/\D/g, "");
  return digits ? `${text!.startsWith("+") ? "+" : ""}${digits}` : null;
}

/** A payment's customer fields, erased: by a customer's redaction, or once their retention ran out. */
export const NO_CUSTOMER_FIELDS = { customerEmail: null, customerName: null, customerPhone: null, billingAddress: null } as const;
