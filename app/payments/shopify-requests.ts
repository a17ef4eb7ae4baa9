// zod schemas of the requests Shopify sends to the app's payment, refund, capture and
// void session URLs (see Shopify's offsite payments request reference).
import { z } from "zod";

const decimalAmount = z.string().regex(/^\d{1,12}(\.\d{1,6})?$/, "must be a decimal string with a dot");
const optionalText = z.string().max(1024).nullish();

export const shopDomainSchema = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9][a-z0-9-]*\.myshopify\.com$/, "must be a myshopify.com domain")
  .max(255);

/**
 * The address fields the app uses (gatewayCustomerFields, and the app page's order from the
 * stored copy), and no others: zod drops every other field Shopify sends (company, any later
 * one), so the payment's stored billingAddress holds only these.
 */
export const addressSchema = z.object({
  given_name: optionalText,
  family_name: optionalText,
  line1: optionalText,
  line2: optionalText,
  city: optionalText,
  postal_code: optionalText,
  province: optionalText,
  country_code: z.string().max(3).nullish(),
  phone_number: optionalText,
});

export const customerSchema = z
  .object({
    email: z.string().max(320).nullish(),
    phone_number: optionalText,
    locale: z.string().max(20).nullish(),
    billing_address: addressSchema.nullish(),
    shipping_address: addressSchema.nullish(),
  })
  .passthrough();

const httpUrl = z.string().url().max(4096).refine((u) => /^https?:\/\//.test(u), "must be http(s)");

/**
 * A session's gid, of its own kind. As long as the other identifiers at most: it is stored
 * and indexed with the shop, and PostgreSQL cannot index a value of a few kilobytes.
 */
const sessionGid = (kind: "PaymentSession" | "RefundSession" | "CaptureSession" | "VoidSession") =>
  z
    .string()
    .max(255)
    .regex(new RegExp(`^gid://shopify/${kind}/.+$`), `must be a ${kind} gid`);

export const paymentSessionRequestSchema = z
  .object({
    id: z.string().min(1).max(255),
    gid: sessionGid("PaymentSession"),
    group: z.string().min(1).max(255),
    session_id: z.string().max(255).nullish(),
    amount: decimalAmount,
    currency: z.string().regex(/^[A-Z]{3}$/, "must be an ISO 4217 code"),
    test: z.boolean(),
    merchant_locale: z.string().max(20).nullish(),
    payment_method: z
      .object({
        type: z.literal("offsite"),
        data: z.object({ cancel_url: httpUrl.nullish() }).passthrough().nullish(),
      })
      .passthrough(),
    // Where some API versions put it; either may be null when the other carries it.
    cancel_url: httpUrl.nullish(),
    proposed_at: z.string().max(64),
    kind: z.enum(["sale", "authorization"]).default("sale"),
    customer: customerSchema.nullish(),
  })
  .passthrough()
  .transform((req, ctx) => {
    const cancelUrl = req.payment_method.data?.cancel_url ?? req.cancel_url;
    if (!cancelUrl) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ["payment_method", "data", "cancel_url"], message: "is required" });
      return z.NEVER;
    }
    return { ...req, cancelUrl };
  });
export type PaymentSessionRequest = z.output<typeof paymentSessionRequestSchema>;

const followUpBase = {
  id: z.string().min(1).max(255),
  payment_id: z.string().min(1).max(255),
  amount: decimalAmount,
  currency: z.string().regex(/^[A-Z]{3}$/),
  merchant_locale: z.string().max(20).nullish(),
  proposed_at: z.string().max(64),
  test: z.boolean().optional(),
};

export const refundSessionRequestSchema = z.object({ ...followUpBase, gid: sessionGid("RefundSession") }).passthrough();
export const captureSessionRequestSchema = z.object({ ...followUpBase, gid: sessionGid("CaptureSession") }).passthrough();
export const voidSessionRequestSchema = z
  .object({ ...followUpBase, amount: decimalAmount.optional(), currency: z.string().regex(/^[A-Z]{3}$/).optional(), gid: sessionGid("VoidSession") })
  .passthrough();

export type FollowUpKind = "refund" | "capture" | "void";

/** The app's answer to a follow-up, as its call is named ("capture.resolve", "void.reject"...): which request, and whether the app accepted it; null for any other call. */
export function followUpAnswerOf(call: string | undefined): { request: FollowUpKind; accepted: boolean } | null {
  const match = /^(refund|capture|void)\.(resolve|reject)$/.exec(call ?? "");
  return match ? { request: match[1] as FollowUpKind, accepted: match[2] === "resolve" } : null;
}
export const followUpSchemas = { refund: refundSessionRequestSchema, capture: captureSessionRequestSchema, void: voidSessionRequestSchema } as const;

/** The headers every Shopify payments request carries. */
export const shopifyPaymentsHeadersSchema = z.object({
  "shopify-shop-domain": shopDomainSchema,
  "shopify-request-id": z.string().min(1).max(255),
  "shopify-api-version": z.string().regex(/^\d{4}-\d{2}$/, "must look like 2026-04"),
});

export function readShopifyHeaders(header: (name: string) => string | null) {
  return shopifyPaymentsHeadersSchema.safeParse({
    "shopify-shop-domain": header("shopify-shop-domain") ?? undefined,
    "shopify-request-id": header("shopify-request-id") ?? undefined,
    "shopify-api-version": header("shopify-api-version") ?? undefined,
  });
}
