// A customer's e-mail as the app keeps it: trimmed and in lower case. Shopify's privacy
// webhooks name a customer by the e-mail of their Shopify account, which may differ in case
// from what they typed at checkout; every provider in use treats the two as one address, so
// payments and data requests are stored, and looked up, by this one form.
export function customerEmailKey(email: string | null | undefined): string | null {
  const key = email?.trim().toLowerCase();
  return key ? key : null;
}
