// Signed webhooks (Shopify's, HMAC-verified; the gateway's, signed with the shop's Secret Key)
// whose body carries one string with a NUL character or an unpaired UTF-16 surrogate, which no
// PostgreSQL text column can hold. Refused with a 400 and its reason before anything is read or
// stored, alike on both databases, as the payments API refuses such bodies: never a 500 that
// every redelivery would repeat.
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { signWebhook } from "../../app/gateway/webhook-signature";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { shopifyWebhookHeaders } from "../support/shopify-webhooks";
import { stackOnDatabase, type Stack } from "../support/stack";

/** A text a client may put in a JSON string (escaped), which no PostgreSQL text column can take. */
const unstorable = fc
  .tuple(fc.string({ maxLength: 6 }), fc.constantFrom("\u0000", "\ud800", "\udfff"), fc.string({ maxLength: 6 }))
  .map(([a, bad, b]) => `${a}${bad}${b}`);

function expectRefused(status: number, text: string, what: string, reason: RegExp) {
  expect(status, `${what} answered ${status}: ${text.slice(0, 200)}`).toBe(400);
  expect(text).toMatch(reason);
}

const SHOPIFY_REASON = /"error":"(nul_character|lone_surrogate)"/;

async function postShopifyWebhook(stack: Stack, topic: string, payload: unknown) {
  const body = JSON.stringify(payload);
  const response = await fetch(`${stack.app.url}/webhooks/${topic}`, { method: "POST", body, headers: shopifyWebhookHeaders(stack, topic, body, stack.shopDomain) });
  return { status: response.status, text: await response.text(), body };
}

describe.each(["sqlite", "postgresql"] as const)("signed webhooks with a NUL or lone surrogate on %s", (kind) => {
  const stack = stackOnDatabase(kind, { workers: false });

  it("Shopify's customers/data_request with one customer field unstorable is answered 400 with its reason", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("email", "phone", "id"), unstorable, async (field, text) => {
        const payload = {
          shop_domain: stack().shopDomain,
          customer: { id: 1, email: "ana@example.com", phone: "+34600000000", [field]: text },
          orders_requested: [],
          data_request: { id: 9 },
        };
        const answer = await postShopifyWebhook(stack(), "customers/data_request", payload);
        expectRefused(answer.status, answer.text, `customers/data_request ${answer.body}`, SHOPIFY_REASON);
      }),
      { numRuns: 12 },
    );
  });

  it("Shopify's customers/redact with one customer field unstorable is answered 400 with its reason", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("email", "phone"), unstorable, async (field, text) => {
        const payload = { shop_domain: stack().shopDomain, customer: { id: 1, email: "ana@example.com", phone: "+34600000000", [field]: text }, orders_to_redact: [] };
        const answer = await postShopifyWebhook(stack(), "customers/redact", payload);
        expectRefused(answer.status, answer.text, `customers/redact ${answer.body}`, SHOPIFY_REASON);
      }),
      { numRuns: 12 },
    );
  });

  it("the gateway's notification, signed with the shop's Secret Key, with an unstorable status code is answered 400 with its reason", async () => {
    const s = stack();
    const shop = await s.services.db.shop.findUniqueOrThrow({ where: { shopDomain: s.shopDomain } });
    const secretHex = s.services.cipher.decrypt(shop.sandboxSecretKeyEnc!, credentialContext(shop.id, "sandbox", "secret-key"));
    await fc.assert(
      fc.asyncProperty(unstorable.filter((t) => t.length <= 16), async (code) => {
        const body = JSON.stringify({ identifier: randomUUID(), status: code });
        const nonce = String(Math.floor(Date.now() / 1000));
        const signature = signWebhook({ secretHex, nonce, rawBody: body });
        const response = await fetch(`${s.app.url}/gateway/webhooks/${shop.webhookToken}`, { method: "POST", body, headers: { "content-type": "application/json", "x-nonce": nonce, "x-signature": signature } });
        expectRefused(response.status, await response.text(), `gateway webhook ${body}`, /malformed_payload/);
      }),
      { numRuns: 12 },
    );
  });

  it("stores nothing of what it refused", async () => {
    const { db } = stack().services;
    expect(await db.customerDataRequest.count()).toBe(0);
    expect(await db.gatewayWebhook.count()).toBe(0);
  });
});
