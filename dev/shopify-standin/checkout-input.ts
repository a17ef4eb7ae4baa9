// What a simulated checkout asks for (amount, currency, test mode, locale, customer),
// its demo defaults, and the zod schema that turns the form (or a JSON body) into it.
// Amounts stay decimal strings: formatted with the currency's minor units, always with a dot.

import Decimal from "decimal.js";
import { z } from "zod";
import type { CustomerAddress } from "./store";

/** ISO 4217 codes offered by the simulator, with their minor units. */
export const CURRENCIES: Record<string, number> = {
  EUR: 2,
  USD: 2,
  GBP: 2,
  CHF: 2,
  CAD: 2,
  AUD: 2,
  NZD: 2,
  MXN: 2,
  BRL: 2,
  ARS: 2,
  COP: 2,
  PEN: 2,
  CLP: 0,
  SEK: 2,
  NOK: 2,
  DKK: 2,
  PLN: 2,
  CZK: 2,
  HUF: 2,
  RON: 2,
  TRY: 2,
  JPY: 0,
  KRW: 0,
  SGD: 2,
  HKD: 2,
  INR: 2,
  AED: 2,
  ZAR: 2,
  KWD: 3,
};

export const LOCALES = ["en", "es", "fr", "de", "it", "pt-BR", "pt-PT", "nl", "ca", "ja"] as const;

export interface CheckoutInput {
  amount: string;
  currency: string;
  test: boolean;
  locale: string;
  kind: "sale" | "authorization";
  customer: {
    email?: string;
    phone_number?: string;
    billing_address: CustomerAddress;
    /** A shipping address of its own; the billing address when absent. */
    shipping_address?: CustomerAddress;
  };
}

export const DEMO_CHECKOUT: CheckoutInput = {
  amount: "49.90",
  currency: "EUR",
  test: true,
  locale: "es",
  kind: "sale",
  customer: {
    email: "lucia.fernandez@example.com",
    phone_number: "+34612345678",
    billing_address: {
      given_name: "Lucía",
      family_name: "Fernández Ruiz",
      line1: "Calle de Alcalá 42",
      line2: "3º B",
      city: "Madrid",
      postal_code: "28014",
      province: "Madrid",
      province_code: "M",
      country_code: "ES",
      phone_number: "+34612345678",
      company: "",
    },
  },
};

const AMOUNT = /^\d{1,12}(\.\d{1,4})?$/;

const optionalText = (max: number) =>
  z
    .string()
    .trim()
    .max(max)
    .optional()
    .transform((v) => (v ? v : undefined));

const addressSchema = z.object({
  given_name: optionalText(100),
  family_name: optionalText(100),
  line1: optionalText(200),
  line2: optionalText(200),
  city: optionalText(100),
  postal_code: optionalText(20),
  province: optionalText(100),
  province_code: optionalText(10),
  country_code: z
    .string()
    .trim()
    .toUpperCase()
    .regex(/^([A-Z]{2})?$/, "country code must be two letters (ISO 3166-1 alpha-2)")
    .optional()
    .transform((v) => (v ? v : undefined)),
  phone_number: optionalText(30),
  company: optionalText(100),
});

/** The checkout as JSON (POST /_standin/sessions) or from the form, after flattening. */
export const checkoutInputSchema = z
  .object({
    amount: z.string().trim().regex(AMOUNT, "amount must be a positive decimal number with a dot, like 49.90"),
    currency: z.enum(Object.keys(CURRENCIES) as [string, ...string[]], { message: "currency must be one of the listed ISO 4217 codes" }),
    test: z.boolean(),
    locale: z.enum(LOCALES),
    kind: z.enum(["sale", "authorization"]).default("sale"),
    customer: z.object({
      email: z
        .string()
        .trim()
        .email("email must be an e-mail address")
        .optional()
        .or(z.literal("").transform(() => undefined)),
      phone_number: optionalText(30),
      billing_address: addressSchema,
      shipping_address: addressSchema.optional(),
    }),
  })
  .superRefine((input, ctx) => {
    // Refinements also run when a field already failed: only a well-formed amount is checked further.
    if (!AMOUNT.test(input.amount)) return;
    const minor = CURRENCIES[input.currency] ?? 2;
    const amount = new Decimal(input.amount);
    if (amount.lte(0)) ctx.addIssue({ code: "custom", path: ["amount"], message: "amount must be greater than zero" });
    if (amount.decimalPlaces() > minor) {
      ctx.addIssue({ code: "custom", path: ["amount"], message: `${input.currency} amounts have at most ${minor} decimals` });
    }
  })
  .transform((input) => ({ ...input, amount: formatAmount(input.amount, input.currency) }));

/** Shopify sends amounts with a dot and at least two decimals (three for KWD). */
export function formatAmount(amount: string, currency: string): string {
  const minor = CURRENCIES[currency] ?? 2;
  return new Decimal(amount).toFixed(Math.max(minor, 2));
}

const ADDRESS_FIELDS = Object.keys(addressSchema.shape) as (keyof CustomerAddress)[];
export const BILLING_FIELDS = ADDRESS_FIELDS;

/** Turns the flat HTML form into the nested shape checkoutInputSchema reads. */
export function checkoutFormToInput(form: URLSearchParams): unknown {
  const billing: Record<string, string> = {};
  for (const field of ADDRESS_FIELDS) billing[field] = form.get(`billing_${field}`) ?? "";
  return {
    amount: form.get("amount") ?? "",
    currency: form.get("currency") ?? "",
    test: form.get("test") === "on",
    locale: form.get("locale") ?? "",
    kind: form.get("kind") ?? "sale",
    customer: {
      email: form.get("email") ?? "",
      phone_number: form.get("phone_number") ?? "",
      billing_address: billing,
    },
  };
}
