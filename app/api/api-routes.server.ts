// The machine-facing API: the session requests Shopify's payments platform sends and the
// gateway's signed notifications. These are served by the HTTP server straight from this
// table (server/api-router.ts), not by Remix, which serves the pages: each call here is
// answered in a few milliseconds with a short JSON body, and Remix's request and response
// adapters and route matching cost about as much as the app's own work on them (see
// BENCHMARKS.md). Every route takes POST only; each handler parses with zod, calls one use
// case and answers.
import type { ZodType, ZodTypeDef } from "zod";
import { GATEWAY_WEBHOOKS_PATH } from "~/lib/routed-path";
import type { AppServices } from "~/services.server";
import { receiveFollowUpSession } from "~/payments/follow-up-sessions";
import { receiveGatewayWebhook } from "~/payments/gateway-webhooks";
import { followUpSchemas, paymentSessionRequestSchema, readShopifyHeaders, type FollowUpKind } from "~/payments/shopify-requests";
import { startPaymentSession } from "~/payments/start-payment-session";
import { apiError, readBody, readJsonBody, zodProblem, type ApiAnswer, type ApiRequest } from "./http.server";

export interface ApiRoute {
  /** An Express-style path: `:name` matches one segment, given to the handler in `params`. */
  path: string;
  /** Shopify's calls are only taken with its client certificate (server/mtls.ts). */
  caller: "shopify" | "gateway";
  handle(services: AppServices, request: ApiRequest): Promise<ApiAnswer>;
}

/** A gateway notification is a few hundred bytes. */
const MAX_WEBHOOK_BODY_BYTES = 32 * 1024;

/** The request's Shopify headers and JSON body, parsed with `schema`; or the 4xx to answer. */
async function readShopifyRequest<T>(request: ApiRequest, schema: ZodType<T, ZodTypeDef, unknown>, error: string, what: string) {
  const headers = readShopifyHeaders((name) => request.header(name));
  if (!headers.success) return { ok: false as const, answer: apiError(400, "invalid_headers", "Shopify's payment headers are missing or malformed.", zodProblem(headers.error)) };
  const body = await readJsonBody(request);
  if (!body.ok) return body;
  const parsed = schema.safeParse(body.value);
  if (!parsed.success) return { ok: false as const, answer: apiError(400, error, `The ${what} is malformed.`, zodProblem(parsed.error)) };
  return { ok: true as const, shopDomain: headers.data["shopify-shop-domain"], data: parsed.data };
}

async function paymentSession(services: AppServices, request: ApiRequest): Promise<ApiAnswer> {
  const read = await readShopifyRequest(request, paymentSessionRequestSchema, "invalid_payment_session", "payment session");
  if (!read.ok) return read.answer;
  // The shopper is sent back there: in production only over https (the stand-in's checkout is plain http).
  if (services.env.NODE_ENV === "production" && !read.data.cancelUrl.startsWith("https://")) {
    return apiError(400, "invalid_payment_session", "The payment session is malformed.", { fields: { "payment_method.data.cancel_url": "must be https" } });
  }
  return startPaymentSession(services, { shopDomain: read.shopDomain, request: read.data });
}

/** Refund, capture and void: recorded and answered 201 at once, finished later through the outbox. */
const followUpSession = (kind: FollowUpKind) => async (services: AppServices, request: ApiRequest): Promise<ApiAnswer> => {
  const read = await readShopifyRequest(request, followUpSchemas[kind], `invalid_${kind}_session`, `${kind} session`);
  if (!read.ok) return read.answer;
  const answer = await receiveFollowUpSession(services, { kind, shopDomain: read.shopDomain, request: read.data });
  return answer.status === 201 ? { status: 201, body: null } : answer;
};

/** The per-shop notification URL: verified on the raw bytes, stored, answered. */
async function gatewayWebhook(services: AppServices, request: ApiRequest): Promise<ApiAnswer> {
  const body = await readBody(request, MAX_WEBHOOK_BODY_BYTES);
  if (!body.ok) return body.answer;
  const result = await receiveGatewayWebhook(services, {
    token: request.params.token ?? "",
    rawBody: body.bytes,
    nonce: request.header("x-nonce"),
    signature: request.header("x-signature"),
    maxNonceAgeSeconds: services.env.WEBHOOK_MAX_NONCE_AGE_SECONDS,
    maxNonceLeadSeconds: services.env.WEBHOOK_MAX_NONCE_LEAD_SECONDS,
  });
  return result.status === 200 ? { status: 200, body: { received: true } } : { status: result.status, body: { error: result.reason } };
}

export const API_ROUTES: readonly ApiRoute[] = [
  { path: "/payments/session", caller: "shopify", handle: paymentSession },
  { path: "/payments/refund", caller: "shopify", handle: followUpSession("refund") },
  { path: "/payments/capture", caller: "shopify", handle: followUpSession("capture") },
  { path: "/payments/void", caller: "shopify", handle: followUpSession("void") },
  { path: `${GATEWAY_WEBHOOKS_PATH}:token`, caller: "gateway", handle: gatewayWebhook },
];
