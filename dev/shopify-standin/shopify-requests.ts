// Shopify's side of the conversation: the payment, refund, capture and void session
// requests it POSTs to the app (body and headers as Shopify sends them), and how it
// reads the app's answer (payment: 2xx with {redirect_url}; the others: 201).

import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { CheckoutInput } from "./checkout-input";
import type { CustomerAddress } from "./store";
import {
  gidFor,
  shopifyStyleId,
  type AppDelivery,
  type FollowUpSessionRecord,
  type FollowUpType,
  type PaymentSessionRecord,
  type PaymentSessionRequestBody,
} from "./store";
import { STANDIN_API_VERSION } from "./schema";

const MAX_REDIRECT_ANSWER_BYTES = 8192;
const DELIVERY_TIMEOUT_MS = 15_000;

const redirectAnswerSchema = z.object({
  redirect_url: z
    .string()
    .url()
    .refine((u) => /^https?:/i.test(u), "redirect_url must be an http(s) URL"),
});

export function buildPaymentSession(
  input: CheckoutInput,
  options: { shopDomain: string; origin: string; now: Date; group?: string },
): PaymentSessionRecord {
  const id = shopifyStyleId();
  const { billing_address: billing, shipping_address: shipping = billing } = input.customer;
  // An address with nothing in it is not sent: "any customer field may be missing" (a checkout
  // with no billing address, say, only a shipping one).
  const filled = (address: CustomerAddress) => Object.values(address).some((value) => value !== undefined && value !== "");
  const request: PaymentSessionRequestBody = {
    id,
    gid: gidFor("payment", id),
    group: options.group ?? shopifyStyleId(),
    session_id: shopifyStyleId(),
    amount: input.amount,
    currency: input.currency,
    test: input.test,
    merchant_locale: input.locale,
    payment_method: { type: "offsite", data: { cancel_url: `${options.origin}/checkout/cancelled/${id}` } },
    proposed_at: options.now.toISOString(),
    kind: input.kind,
    customer: {
      ...(input.customer.email ? { email: input.customer.email } : {}),
      ...(input.customer.phone_number ? { phone_number: input.customer.phone_number } : {}),
      locale: input.locale,
      ...(filled(billing) ? { billing_address: { ...billing } } : {}),
      ...(filled(shipping) ? { shipping_address: { ...shipping } } : {}),
    },
  };
  return {
    type: "payment",
    id,
    gid: request.gid,
    group: request.group,
    shopDomain: options.shopDomain,
    createdAt: options.now.toISOString(),
    request,
    state: { code: "OPEN" },
    deliveries: [],
  };
}

export function buildFollowUpSession(
  type: FollowUpType,
  payment: PaymentSessionRecord,
  options: { amount?: string; now: Date },
): FollowUpSessionRecord {
  const id = shopifyStyleId();
  const gid = gidFor(type, id);
  const common = {
    id,
    gid,
    payment_id: payment.id,
    merchant_locale: payment.request.merchant_locale,
    proposed_at: options.now.toISOString(),
    test: payment.request.test,
  };
  const request: Record<string, unknown> =
    type === "void" ? common : { ...common, amount: options.amount ?? payment.request.amount, currency: payment.request.currency };
  return {
    type,
    id,
    gid,
    paymentId: payment.id,
    shopDomain: payment.shopDomain,
    createdAt: options.now.toISOString(),
    request,
    state: { code: "OPEN" },
    deliveries: [],
  };
}

/** POSTs a session request to the app the way Shopify does, and judges the answer. */
export async function deliverToApp(
  url: string,
  body: object,
  options: { shopDomain: string; expect: "redirect" | "created"; now: () => Date },
): Promise<AppDelivery> {
  const requestId = randomUUID();
  const at = options.now().toISOString();
  let status: number;
  let text: string;
  let retryAfter: string | null;
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json",
        "Shopify-Shop-Domain": options.shopDomain,
        "Shopify-Request-Id": requestId,
        "Shopify-Api-Version": STANDIN_API_VERSION,
        "User-Agent": "Shopify-Payments-Standin",
      },
      body: JSON.stringify(body),
      redirect: "manual",
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    status = response.status;
    retryAfter = response.headers.get("retry-after");
    text = await response.text();
  } catch (error) {
    const detail = error instanceof Error && error.name === "TimeoutError" ? `no answer within ${DELIVERY_TIMEOUT_MS} ms` : describeFailure(error);
    return { at, url, requestId, status: null, body: "", outcome: "unreachable", detail: `The app could not be reached: ${detail}`, redirectUrl: null };
  }
  const shown = text.length > MAX_REDIRECT_ANSWER_BYTES ? `${text.slice(0, MAX_REDIRECT_ANSWER_BYTES)}…` : text;
  const refused = (detail: string): AppDelivery => ({ at, url, requestId, status, body: shown, outcome: "refused", detail, redirectUrl: null });

  if (status < 200 || status >= 300) {
    const seconds = retryAfter !== null && /^\d{1,6}$/.test(retryAfter.trim()) ? Number(retryAfter.trim()) : undefined;
    return { ...refused(`The app answered HTTP ${status}; Shopify retries, then shows the buyer an error.`), ...(seconds !== undefined ? { retryAfterSeconds: seconds } : {}) };
  }

  // A refund, capture or void is taken only as Shopify documents it: 201 with an empty body.
  if (options.expect === "created") {
    if (status !== 201 || text.length > 0) return refused(`Shopify expects 201 with an empty body (got ${status}${text.length > 0 ? ` with a ${Buffer.byteLength(text)}-byte body` : ""}).`);
    return { at, url, requestId, status, body: shown, outcome: "accepted", detail: "Accepted (201).", redirectUrl: null };
  }

  if (Buffer.byteLength(text) >= MAX_REDIRECT_ANSWER_BYTES) return refused(`The answer is ${Buffer.byteLength(text)} bytes; Shopify takes under 8192.`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return refused("The answer is not JSON; Shopify expects {\"redirect_url\": \"...\"}.");
  }
  const parsed = redirectAnswerSchema.safeParse(json);
  if (!parsed.success) {
    return refused(`The answer has no valid redirect_url: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  }
  return { at, url, requestId, status, body: shown, outcome: "accepted", detail: "Accepted.", redirectUrl: parsed.data.redirect_url };
}

function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return "unknown error";
  const cause = (error as Error & { cause?: unknown }).cause;
  if (!(cause instanceof Error)) return error.message;
  const code = (cause as Error & { code?: unknown }).code;
  return `${error.message} (${typeof code === "string" ? code : cause.message || cause.name})`;
}
