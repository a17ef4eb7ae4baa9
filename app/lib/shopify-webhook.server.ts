// Shopify's webhooks to app/routes/webhooks.*.tsx, verified on their own: the body's
// HMAC-SHA256 (keyed with the app's API secret, as Shopify signs it) is their only proof of
// origin, so nothing else is needed to trust them. The Shopify library's authenticate.webhook
// first renews the shop's expiring offline token and, when Shopify refuses the renewal (as it
// does once the app is uninstalled), throws a bare 500 before the route runs: the uninstall
// and privacy webhooks would never be handled, and each retry would fail alike. None of these
// routes calls Shopify, so none needs the token.
import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import type { Logger } from "./logger.server";
import { jsonResponse, MAX_ROUTE_BODY_BYTES } from "./http.server";
import { JSON_FLAW_MESSAGES, jsonFlaw } from "./json-flaw";

export interface ShopifyWebhook<Body> {
  /** The shop's domain (X-Shopify-Shop-Domain). */
  shop: string;
  topic: string;
  /** X-Shopify-Webhook-Id: the same for every delivery of one webhook. */
  webhookId: string;
  apiVersion: string;
  /**
   * When the event happened (X-Shopify-Triggered-At); null when absent or unreadable. Not signed
   * (the HMAC covers the body only): it places Shopify's own deliveries, and anyone replaying a
   * body can set it as they like, so it never alone decides to uninstall or delete a shop.
   */
  triggeredAt: Date | null;
  /** The body, parsed by the topic's schema (shopify-webhook-bodies.ts). */
  payload: Body;
}

const headerText = z.string().trim().min(1).max(255);
const EARLIEST_TRIGGERED_AT = Date.UTC(2000, 0, 1);
const LATEST_TRIGGERED_AT = Date.UTC(2100, 0, 1);

const headersSchema = z.object({
  "x-shopify-topic": headerText,
  "x-shopify-shop-domain": headerText.regex(/^[a-z0-9][a-z0-9-]*(\.[a-z0-9][a-z0-9-]*)+$/i, "must be a shop's domain"),
  "x-shopify-webhook-id": headerText,
  "x-shopify-api-version": headerText,
  // A time the databases and the arithmetic on it (a redaction's 48 hours) can hold, or none:
  // the header is not signed, and Shopify's times are of this century.
  "x-shopify-triggered-at": z
    .string()
    .datetime({ offset: true })
    .transform((text) => new Date(text))
    .refine((at) => at.getTime() >= EARLIEST_TRIGGERED_AT && at.getTime() < LATEST_TRIGGERED_AT)
    .nullable()
    .catch(null),
});

const refusal = (status: number, error: string, message: string) => jsonResponse(status, { error, message });

/** The body, or null past `maxBytes` (declared or read so far: the rest is not read). */
async function readBoundedBody(request: Request, maxBytes: number): Promise<Buffer | null> {
  if (Number(request.headers.get("content-length")) > maxBytes) return null;
  if (!request.body) return Buffer.alloc(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const next = await reader.read();
    if (next.done) break;
    size += next.value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return null;
    }
    chunks.push(next.value);
  }
  return Buffer.concat(chunks, size);
}

/** The shop a webhook's body names (shop_domain, or a shop object's myshopify_domain); null when it names none. */
function signedShop(payload: unknown): string | null {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return null;
  const body = payload as Record<string, unknown>;
  for (const key of ["shop_domain", "myshopify_domain"]) {
    const value = body[key];
    if (typeof value === "string") return value;
  }
  return null;
}

/** Whether `hmac` (base64, as in X-Shopify-Hmac-Sha256) signs `body` with `secret`; compared in constant time. */
export function shopifyHmacMatches(body: Uint8Array, hmac: string, secret: string): boolean {
  const expected = Buffer.from(createHmac("sha256", secret).update(body).digest("base64"));
  const given = Buffer.from(hmac.trim());
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Verifies a webhook from Shopify for `topic`, whose body must fit `body`, and returns it;
 * otherwise throws the answer: 405 (not a POST), 413 (body over MAX_ROUTE_BODY_BYTES), 400 (no
 * body, no HMAC, a missing or malformed header, another topic, a body that is not JSON, a body
 * about another shop than the header's, a body that is not the topic's) or 401 (an HMAC that
 * does not match).
 */
export async function verifyShopifyWebhook<Body>(
  request: Request,
  deps: { env: { SHOPIFY_API_SECRET: string; SHOPIFY_API_SECRET_PREVIOUS?: string | undefined }; logger: Logger },
  topic: string,
  body: z.ZodType<Body, z.ZodTypeDef, unknown>,
): Promise<ShopifyWebhook<Body>> {
  const refuse = (status: number, error: string, message: string): never => {
    deps.logger.info("A Shopify webhook was refused", { topic, status, error });
    throw refusal(status, error, message);
  };
  if (request.method !== "POST") throw new Response(null, { status: 405, headers: { allow: "POST" } });
  const raw = await readBoundedBody(request, MAX_ROUTE_BODY_BYTES);
  if (raw === null) return refuse(413, "body_too_large", `The body must be at most ${MAX_ROUTE_BODY_BYTES} bytes.`);
  if (raw.byteLength === 0) return refuse(400, "missing_body", "A webhook has a JSON body.");
  const hmac = request.headers.get("x-shopify-hmac-sha256");
  if (!hmac) return refuse(400, "missing_hmac", "Send the body's HMAC in X-Shopify-Hmac-Sha256.");
  // Until the client secret before a rotation is revoked, Shopify may still sign with it.
  const secrets = [deps.env.SHOPIFY_API_SECRET, deps.env.SHOPIFY_API_SECRET_PREVIOUS].filter((secret): secret is string => secret !== undefined);
  if (!secrets.some((secret) => shopifyHmacMatches(raw, hmac, secret))) return refuse(401, "invalid_hmac", "The HMAC does not match the body.");

  const headers = headersSchema.safeParse(Object.fromEntries(request.headers));
  if (!headers.success) {
    const names = [...new Set(headers.error.issues.map((issue) => String(issue.path[0])))];
    return refuse(400, "invalid_headers", `Missing or malformed: ${names.join(", ")}.`);
  }
  const fields = headers.data;
  if (fields["x-shopify-topic"].toLowerCase() !== topic) return refuse(400, "wrong_topic", `This address takes ${topic} webhooks only.`);
  let payload: unknown;
  try {
    payload = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw));
  } catch {
    return refuse(400, "malformed_json", "The body is not valid UTF-8 JSON.");
  }
  const flaw = jsonFlaw(payload);
  if (flaw) return refuse(400, flaw, JSON_FLAW_MESSAGES[flaw]);
  // The header is not signed; the body is. A body that names its shop (privacy webhooks'
  // shop_domain, app/uninstalled's myshopify_domain) must name the header's: a body signed
  // about one shop, replayed under another's header, would erase or uninstall that other shop.
  const named = signedShop(payload);
  if (named !== null && named.toLowerCase() !== fields["x-shopify-shop-domain"].toLowerCase()) {
    return refuse(400, "shop_mismatch", "X-Shopify-Shop-Domain does not name the shop the body is about.");
  }
  const parsed = body.safeParse(payload);
  if (!parsed.success) return refuse(400, "wrong_body", `The body is not a ${topic} webhook's.`);
  return {
    shop: fields["x-shopify-shop-domain"],
    topic,
    webhookId: fields["x-shopify-webhook-id"],
    apiVersion: fields["x-shopify-api-version"],
    triggeredAt: fields["x-shopify-triggered-at"],
    payload: parsed.data,
  };
}
