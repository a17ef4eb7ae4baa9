// Turns Shopify's customer into the gateway's customer fields, each cut to the gateway's
// bound without splitting a character (grapheme clusters), and leaving out values that
// cannot be shortened without becoming wrong (an e-mail address, a country code).
import { isCountryCode } from "~/gateway/country-codes";
import { gatewayEmailSchema, type CreateOrderRequest } from "~/gateway/schemas";
import type { PaymentSessionRequest } from "./shopify-requests";

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * At most `max` UTF-16 code units (the gateway counts characters as Python does), never splitting a grapheme.
 * Control characters (NUL among them) and unpaired surrogates, which the gateway refuses with a 400
 * (DRF's CharField validators), become spaces, and runs of spaces one.
 */
export function cutText(value: string | null | undefined, max: number): string | undefined {
  const text = value?.replace(/[\p{Cc}\p{Cs}]/gu, " ").normalize("NFC").replace(/\s+/g, " ").trim();
  if (!text) return undefined;
  if (text.length <= max) return text;
  let out = "";
  for (const { segment } of segmenter.segment(text)) {
    if (out.length + segment.length > max) break;
    out += segment;
  }
  return out.trim() || undefined;
}

type CustomerFields = Pick<
  CreateOrderRequest,
  "full_name" | "email_client" | "phone_number" | "home_address" | "address_additional" | "city" | "province" | "zip_code" | "country"
>;

/** The address an order request carries: the billing address, else the shipping address. */
export function customerAddress(customer: PaymentSessionRequest["customer"]) {
  return customer?.billing_address ?? customer?.shipping_address ?? undefined;
}

export function gatewayCustomerFields(customer: PaymentSessionRequest["customer"]): CustomerFields {
  if (!customer) return {};
  const address = customerAddress(customer);
  const name = [address?.given_name, address?.family_name].filter(Boolean).join(" ");
  const email = customer.email?.trim();
  const phone = (customer.phone_number ?? address?.phone_number)?.replace(/[^\d+]/g, "");
  const country = address?.country_code?.trim().toUpperCase();
  const fields: CustomerFields = {
    full_name: cutText(name, 48),
    // Optional for the gateway: an address its own check would refuse is left out, never
    // allowed to make the whole order request invalid (which would refuse the session).
    email_client: email && gatewayEmailSchema.safeParse(email).success ? email : undefined,
    phone_number: phone && phone.length <= 15 ? phone : undefined,
    home_address: cutText(address?.line1, 256),
    address_additional: cutText(address?.line2, 64),
    city: cutText(address?.city, 28),
    province: cutText(address?.province, 28),
    zip_code: cutText(address?.postal_code, 12),
    country: country && isCountryCode(country) ? country : undefined,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as CustomerFields;
}

/** The gateway language for a shopper: the shop's choice, or the shopper's locale when supported. */
export function gatewayLanguage(shopLanguage: string, locale: string | null | undefined): string {
  if (shopLanguage !== "AUTO") return shopLanguage;
  const code = (locale ?? "").slice(0, 2).toUpperCase();
  return ["EN", "ES", "PT", "IT", "FR", "DE"].includes(code) ? code : "EN";
}
