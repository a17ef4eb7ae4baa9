// A Shopify webhook is verified by the HMAC of its raw body alone, on a bounded body: past
// MAX_ROUTE_BODY_BYTES (declared, or read so far) it is refused with a 413 and the rest of the
// body is not read.
import { createHmac, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { MAX_ROUTE_BODY_BYTES } from "../../app/lib/http.server";
import { createLogger } from "../../app/lib/logger.server";
import { shopRedactBody } from "../../app/lib/shopify-webhook-bodies";
import { shopifyHmacMatches, verifyShopifyWebhook } from "../../app/lib/shopify-webhook.server";

const SECRET = "test-api-secret";
const deps = { env: { SHOPIFY_API_SECRET: SECRET }, logger: createLogger({ level: "silent" }) };
const sign = (body: Uint8Array | string) => createHmac("sha256", SECRET).update(body).digest("base64");

function headers(body: Uint8Array | string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    "content-type": "application/json",
    "x-shopify-topic": "shop/redact",
    "x-shopify-shop-domain": "demo-shop.myshopify.com",
    "x-shopify-hmac-sha256": sign(body),
    "x-shopify-webhook-id": randomUUID(),
    "x-shopify-api-version": "2026-04",
    ...extra,
  };
}

/** A body of `total` bytes in 64 KiB chunks; `pulled` counts the bytes handed out. */
function countedBody(total: number): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= total) return controller.close();
      const chunk = new Uint8Array(Math.min(64 * 1024, total - pulled)).fill(0x20);
      pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { stream, pulled: () => pulled };
}

async function refusal(promise: Promise<unknown>): Promise<Response> {
  const thrown = await promise.then(
    () => null,
    (error: unknown) => error,
  );
  if (!(thrown instanceof Response)) throw new Error(`expected a thrown answer, got ${String(thrown)}`);
  return thrown;
}

describe("verifyShopifyWebhook", () => {
  it("returns the webhook signed with the app's secret, whatever the shop's session", async () => {
    const body = JSON.stringify({ shop_id: 1, shop_domain: "demo-shop.myshopify.com" });
    const request = new Request("http://app.test/webhooks/shop/redact", { method: "POST", body, headers: headers(body, { "x-shopify-triggered-at": "2026-05-01T10:00:00.000Z" }) });
    const webhook = await verifyShopifyWebhook(request, deps, "shop/redact", shopRedactBody);
    expect(webhook).toMatchObject({ shop: "demo-shop.myshopify.com", topic: "shop/redact", apiVersion: "2026-04", payload: JSON.parse(body) });
    expect(webhook.triggeredAt?.toISOString()).toBe("2026-05-01T10:00:00.000Z");
  });

  it("takes a webhook signed with the client secret before a rotation while it is configured, and no other", async () => {
    const body = JSON.stringify({ shop_id: 1, shop_domain: "demo-shop.myshopify.com" });
    const signedWith = (secret: string) =>
      new Request("http://app.test/webhooks/shop/redact", { method: "POST", body, headers: headers(body, { "x-shopify-hmac-sha256": createHmac("sha256", secret).update(body).digest("base64") }) });
    const rotated = { ...deps, env: { SHOPIFY_API_SECRET: "the-new-secret", SHOPIFY_API_SECRET_PREVIOUS: SECRET } };
    expect((await verifyShopifyWebhook(signedWith(SECRET), rotated, "shop/redact", shopRedactBody)).shop).toBe("demo-shop.myshopify.com");
    expect((await verifyShopifyWebhook(signedWith("the-new-secret"), rotated, "shop/redact", shopRedactBody)).shop).toBe("demo-shop.myshopify.com");
    expect((await refusal(verifyShopifyWebhook(signedWith("another-secret"), rotated, "shop/redact", shopRedactBody))).status).toBe(401);
    // Unset once the old secret is revoked: a webhook signed with it is refused.
    expect((await refusal(verifyShopifyWebhook(signedWith(SECRET), { ...deps, env: { SHOPIFY_API_SECRET: "the-new-secret" } }, "shop/redact", shopRedactBody))).status).toBe(401);
  });

  it("refuses a body declared past the limit without reading any of it", async () => {
    const { stream, pulled } = countedBody(MAX_ROUTE_BODY_BYTES + 4 * 1024 * 1024);
    const request = new Request("http://app.test/webhooks/shop/redact", {
      method: "POST",
      body: stream,
      duplex: "half",
      headers: { ...headers(""), "content-length": String(MAX_ROUTE_BODY_BYTES + 4 * 1024 * 1024) },
    } as RequestInit);
    const answer = await refusal(verifyShopifyWebhook(request, deps, "shop/redact", shopRedactBody));
    expect(answer.status).toBe(413);
    expect(((await answer.json()) as { error: string }).error).toBe("body_too_large");
    expect(pulled()).toBeLessThanOrEqual(64 * 1024);
  });

  it("refuses a body streamed past the limit once it passes the limit", async () => {
    const { stream, pulled } = countedBody(MAX_ROUTE_BODY_BYTES + 4 * 1024 * 1024);
    const request = new Request("http://app.test/webhooks/shop/redact", { method: "POST", body: stream, duplex: "half", headers: headers("") } as RequestInit);
    const answer = await refusal(verifyShopifyWebhook(request, deps, "shop/redact", shopRedactBody));
    expect(answer.status).toBe(413);
    expect(pulled()).toBeLessThan(MAX_ROUTE_BODY_BYTES + 256 * 1024);
  });

  it("takes a body at the limit", async () => {
    const body = `{"shop_domain":"demo-shop.myshopify.com","padding":"${"x".repeat(MAX_ROUTE_BODY_BYTES - 56)}"}`;
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_ROUTE_BODY_BYTES);
    const request = new Request("http://app.test/webhooks/shop/redact", { method: "POST", body, headers: headers(body) });
    expect((await verifyShopifyWebhook(request, deps, "shop/redact", shopRedactBody)).shop).toBe("demo-shop.myshopify.com");
  });
});

describe("shopifyHmacMatches", () => {
  it("matches the HMAC of the exact bytes only", () => {
    const body = Buffer.from('{"a":"é"}');
    expect(shopifyHmacMatches(body, sign(body), SECRET)).toBe(true);
    expect(shopifyHmacMatches(body, sign('{"a":"e"}'), SECRET)).toBe(false);
    expect(shopifyHmacMatches(body, sign(body), "another-secret")).toBe(false);
    expect(shopifyHmacMatches(body, "", SECRET)).toBe(false);
    expect(shopifyHmacMatches(body, sign(body).slice(0, -2), SECRET)).toBe(false);
  });
});
