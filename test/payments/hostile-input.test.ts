// Hostile input to every public route: random bodies, wrong types, huge bodies, wrong
// content types, missing headers. Every answer is a 4xx with a reason, never a 5xx or a
// crash, and nothing is stored.
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../app/api/http.server";
import { startStack, type Stack } from "../support/stack";

let stack: Stack;
let webhookPath: string;

beforeAll(async () => {
  stack = await startStack({ workers: false });
  const shop = await stack.services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  webhookPath = `/gateway/webhooks/${shop.webhookToken}`;
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

const shopifyHeaders = () => ({
  "content-type": "application/json",
  "shopify-shop-domain": stack.shopDomain,
  "shopify-request-id": randomUUID(),
  "shopify-api-version": "2026-04",
});

async function storedRows() {
  const db = stack.services.db;
  const [payments, requests, webhooks, outbox, events] = await Promise.all([
    db.payment.count(),
    db.sessionRequest.count(),
    db.gatewayWebhook.count(),
    db.outboxMessage.count(),
    db.paymentEvent.count(),
  ]);
  return { payments, requests, webhooks, outbox, events };
}

async function send(path: string, init: RequestInit): Promise<Response> {
  return fetch(`${stack.app.url}${path}`, { redirect: "manual", ...init });
}

function expectClientError(response: Response, what: string) {
  expect(response.status, what).toBeGreaterThanOrEqual(400);
  expect(response.status, what).toBeLessThan(500);
}

const SHOPIFY_ROUTES = ["/payments/session", "/payments/refund", "/payments/capture", "/payments/void"];

describe("Shopify's payment routes", () => {
  it.each(SHOPIFY_ROUTES)("%s refuses random JSON bodies with a 4xx and a reason, storing nothing", async (path) => {
    const before = await storedRows();
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 3 }), async (value) => {
        const response = await send(path, { method: "POST", headers: shopifyHeaders(), body: JSON.stringify(value) });
        expectClientError(response, JSON.stringify(value).slice(0, 200));
        const body = (await response.json()) as { error?: string; message?: string };
        expect(body.error).toBeTruthy();
        expect(body.message).toBeTruthy();
      }),
      { numRuns: 40 },
    );
    expect(await storedRows()).toEqual(before);
  });

  it.each(SHOPIFY_ROUTES)("%s refuses wrong types, wrong content types, missing headers and huge bodies", async (path) => {
    const before = await storedRows();
    const valid = stack.standin.state.createPaymentSession({ test: true }).request as unknown as Record<string, unknown>;
    const cases: [string, RequestInit][] = [
      ["wrong types", { method: "POST", headers: shopifyHeaders(), body: JSON.stringify({ ...valid, amount: 49.9, test: "yes", id: 7 }) }],
      ["a NUL character in a name", { method: "POST", headers: shopifyHeaders(), body: JSON.stringify({ ...valid, id: randomUUID(), customer: { billing_address: { given_name: "Ana\u0000" } } }) }],
      // Stored by SQLite but refused by PostgreSQL's text: refused alike on both, before anything is stored.
      ["an unpaired surrogate in the id", { method: "POST", headers: shopifyHeaders(), body: JSON.stringify({ ...valid, id: `${randomUUID()}\ud800` }) }],
      ["an unpaired surrogate in a name", { method: "POST", headers: shopifyHeaders(), body: JSON.stringify({ ...valid, id: randomUUID(), customer: { billing_address: { given_name: "Ana\udc00" } } }) }],
      // Stored by SQLite but too long for PostgreSQL's index on the shop and gid: refused alike.
      ["a gid longer than any of Shopify's", { method: "POST", headers: shopifyHeaders(), body: JSON.stringify({ ...valid, id: randomUUID(), gid: `${String(valid.gid)}${"7".repeat(4000)}` }) }],
      ["form body", { method: "POST", headers: { ...shopifyHeaders(), "content-type": "application/x-www-form-urlencoded" }, body: "id=1&amount=2" }],
      ["no content type", { method: "POST", headers: { ...shopifyHeaders(), "content-type": "" }, body: JSON.stringify(valid) }],
      ["missing shop header", { method: "POST", headers: { "content-type": "application/json", "shopify-request-id": "x", "shopify-api-version": "2026-04" }, body: JSON.stringify(valid) }],
      ["malformed shop header", { method: "POST", headers: { ...shopifyHeaders(), "shopify-shop-domain": "evil.example.com" }, body: JSON.stringify(valid) }],
      ["broken JSON", { method: "POST", headers: shopifyHeaders(), body: '{"id": "a",' }],
      ["invalid UTF-8", { method: "POST", headers: shopifyHeaders(), body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]) }],
      ["huge body", { method: "POST", headers: shopifyHeaders(), body: JSON.stringify({ ...valid, padding: "x".repeat(2_000_000) }) }],
      ["GET", { method: "GET" }],
    ];
    for (const [what, init] of cases) {
      const response = await send(path, init);
      expectClientError(response, what);
    }
    expect(await storedRows()).toEqual(before);
  });

  it.each(SHOPIFY_ROUTES)("%s refuses JSON nested deeper than it allows with a 400 and a reason, at any depth the body limit lets through", async (path) => {
    const before = await storedRows();
    const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
    for (const depth of [30_000, MAX_JSON_DEPTH + 1]) {
      const response = await send(path, { method: "POST", headers: shopifyHeaders(), body: nested(depth) });
      expect(response.status, `${depth} levels`).toBe(400);
      expect(((await response.json()) as { error?: string }).error, `${depth} levels`).toBe("too_deep");
    }
    // Up to the bound the body is read and answered for what it is: not a session request.
    const within = await send(path, { method: "POST", headers: shopifyHeaders(), body: nested(MAX_JSON_DEPTH) });
    expect(within.status).toBe(400);
    expect(((await within.json()) as { error?: string }).error).not.toBe("too_deep");
    expect(await storedRows()).toEqual(before);
  });
});

describe("the gateway webhook route", () => {
  it("refuses random bodies and headers with a 4xx, storing nothing", async () => {
    const before = await storedRows();
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 300 }), fc.option(fc.string({ maxLength: 80 })), fc.option(fc.string({ maxLength: 80 })), async (body, nonce, signature) => {
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (nonce !== null) headers["x-nonce"] = nonce.replace(/[^\x20-\x7e]/g, "");
        if (signature !== null) headers["x-signature"] = signature.replace(/[^\x20-\x7e]/g, "");
        const response = await send(webhookPath, { method: "POST", headers, body });
        expectClientError(response, body.slice(0, 100));
        expect(((await response.json()) as { error?: string }).error).toBeTruthy();
      }),
      { numRuns: 60 },
    );
    const huge = await send(webhookPath, { method: "POST", body: "x".repeat(1_000_000) });
    expect(huge.status).toBe(413);
    const unknown = await send("/gateway/webhooks/not-a-token", { method: "POST", body: "{}" });
    expect(unknown.status).toBe(404);
    const after = await storedRows();
    expect({ ...after, webhooks: after.webhooks }).toEqual(before);
  });
});

describe("return links and Shopify webhooks", () => {
  it("random return links answer 404", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, maxLength: 40 }), fc.constantFrom("ok", "ko", "standby", "other"), fc.string({ maxLength: 60 }), async (id, outcome, sig) => {
        const response = await send(`/payments/return/${encodeURIComponent(id)}/${outcome}?sig=${encodeURIComponent(sig)}`, { method: "GET" });
        expectClientError(response, id);
      }),
      { numRuns: 40 },
    );
  });

  it("a return link that leads to no payment gets a page saying so and what to do, in the browser's language", async () => {
    for (const [language, heading] of [
      ["en", "This payment link is not valid."],
      ["es", "Este enlace de pago no es válido."],
    ] as const) {
      const response = await send(`/payments/return/c${"0".repeat(24)}/ok?sig=${"A".repeat(43)}`, { method: "GET", headers: { "accept-language": `${language};q=0.9` } });
      expect(response.status).toBe(404);
      expect(response.headers.get("content-type")).toMatch(/^text\/html/);
      const html = await response.text();
      expect(html).toContain(`<html lang="${language}">`);
      expect(html).toContain(`<h1>${heading}</h1>`);
    }
  });

  it.each(["/webhooks/app/uninstalled", "/webhooks/customers/data_request", "/webhooks/customers/redact", "/webhooks/shop/redact"])(
    "%s refuses a request without a valid HMAC",
    async (path) => {
      const before = await storedRows();
      const response = await send(path, {
        method: "POST",
        headers: { "content-type": "application/json", "x-shopify-topic": "shop/redact", "x-shopify-shop-domain": stack.shopDomain, "x-shopify-hmac-sha256": "bm90LWEtcmVhbC1obWFj", "x-shopify-webhook-id": randomUUID(), "x-shopify-api-version": "2026-04" },
        body: JSON.stringify({ shop_domain: stack.shopDomain }),
      });
      expectClientError(response, path);
      expect(await storedRows()).toEqual(before);
      expect(await stack.services.db.shop.count({ where: { shopDomain: stack.shopDomain } })).toBe(1);
    },
  );
});

describe("the shopper's payment page", () => {
  it("answers a post that is not a form, or a form without a coin, with a 4xx and picks no coin", async () => {
    const { checkoutMode } = await stack.services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
    await stack.services.db.shop.update({ where: { shopDomain: stack.shopDomain }, data: { checkoutMode: "app_page" } });
    try {
      const { session, delivery } = await stack.standin.state.startPayment({ test: true });
      expect(delivery.status).toBe(200);
      const page = new URL(delivery.redirectUrl!);
      const bodies: [string, RequestInit][] = [
        ["JSON", { headers: { "content-type": "application/json" }, body: JSON.stringify({ symbol: "BTC" }) }],
        ["plain text", { headers: { "content-type": "text/plain" }, body: "symbol=BTC" }],
        ["no content type", { body: new Uint8Array([115, 121, 109]) }],
        ["broken multipart", { headers: { "content-type": "multipart/form-data; boundary=x" }, body: "--x\r\nnot a part" }],
        ["a form without a coin", { headers: { "content-type": "application/x-www-form-urlencoded" }, body: "coin=BTC" }],
        ["a form with an unknown coin", { headers: { "content-type": "application/x-www-form-urlencoded" }, body: "symbol=NOT_A_COIN" }],
      ];
      for (const [what, init] of bodies) {
        const response = await send(`${page.pathname}${page.search}`, { method: "POST", ...init });
        expectClientError(response, what);
      }
      const payment = await stack.services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
      expect(payment).toMatchObject({ state: "started", gatewayOrderId: null, orderRequestedAt: null });
    } finally {
      await stack.services.db.shop.update({ where: { shopDomain: stack.shopDomain }, data: { checkoutMode } });
    }
  });
});
