// Shopify's webhooks to the app's /webhooks routes, as Shopify sends them: the body signed with
// the app's secret and Shopify's headers.
import { createHmac, randomUUID } from "node:crypto";
import type { Stack } from "./stack";

/** The HMAC Shopify sends with a body: base64 of HMAC-SHA256 under the app's secret. */
export function shopifyHmac(stack: Stack, body: string | Uint8Array): string {
  return createHmac("sha256", stack.env.SHOPIFY_API_SECRET).update(body).digest("base64");
}

/** Shopify's headers for a webhook about `shop`, its body signed; `changes` replace or (undefined) remove some. */
export function shopifyWebhookHeaders(stack: Stack, topic: string, body: string, shop: string, changes: Record<string, string | undefined> = {}): Record<string, string> {
  const headers: Record<string, string | undefined> = {
    "content-type": "application/json",
    "x-shopify-topic": topic,
    "x-shopify-shop-domain": shop,
    "x-shopify-hmac-sha256": shopifyHmac(stack, body),
    "x-shopify-webhook-id": randomUUID(),
    "x-shopify-api-version": "2026-04",
    "x-shopify-event-id": randomUUID(),
    "x-shopify-triggered-at": new Date().toISOString(),
    ...changes,
  };
  return Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** Posts a webhook of `topic`; a redelivery is the same `webhookId` again. */
export function sendShopifyWebhook(
  stack: Stack,
  topic: string,
  payload: unknown,
  options: { shop?: string; webhookId?: string; triggeredAt?: Date } = {},
): Promise<Response> {
  const body = JSON.stringify(payload);
  return fetch(`${stack.app.url}/webhooks/${topic}`, {
    method: "POST",
    body,
    headers: shopifyWebhookHeaders(stack, topic, body, options.shop ?? stack.shopDomain, {
      "x-shopify-webhook-id": options.webhookId ?? randomUUID(),
      "x-shopify-triggered-at": (options.triggeredAt ?? new Date()).toISOString(),
    }),
  });
}

/** The body of an app/uninstalled about `shop`, as Shopify sends it (the shop's fields, in part). */
export const uninstalledBody = (shop: string) => ({ id: 1, name: "Demo shop", domain: shop, myshopify_domain: shop });

/** The body of a shop/redact about `shop`. */
export const shopRedactBody = (shop: string) => ({ shop_id: 1, shop_domain: shop });

/** What the app holds for the stack's shop: whether it is installed, its credentials, token, readiness and payments. */
export async function shopHoldings(stack: Stack) {
  const db = stack.services.db;
  const shop = await db.shop.findUnique({ where: { shopDomain: stack.shopDomain } });
  return {
    row: shop !== null,
    uninstalled: shop?.uninstalledAt != null,
    sandboxCredentials: shop?.sandboxDeviceKeyEnc != null && shop.sandboxSecretKeyEnc != null,
    ready: shop?.paymentsAppReady ?? null,
    offlineTokens: await db.session.count({ where: { shop: stack.shopDomain } }),
    payments: shop ? await db.payment.count({ where: { shopId: shop.id } }) : 0,
  };
}
