// Multi-shop isolation and Shopify's app and privacy webhooks (HMAC-verified by the
// Shopify library), through the real routes.
import { createHmac, randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { signWebhook } from "../../app/gateway/webhook-signature";
import { connectSandbox } from "../../app/shops/onboarding.server";
import { listCustomerDataRequests, takeCustomerDataReport } from "../../app/shops/customer-data-requests.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { startStack, waitFor, type Stack } from "../support/stack";

const OTHER_SHOP = "other-shop.myshopify.com";
let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
  const other = await connectSandbox(stack.services, OTHER_SHOP);
  if (!other.ok) throw new Error(other.message);
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

const db = () => stack.services.db;

async function secretOf(shopDomain: string): Promise<string> {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain } });
  return stack.services.cipher.decrypt(shop.sandboxSecretKeyEnc!, credentialContext(shop.id, "sandbox", "secret-key"));
}

async function shopifyWebhook(topic: string, payload: unknown, shop = stack.shopDomain, webhookId: string = randomUUID(), triggeredAt = new Date()): Promise<Response> {
  const body = JSON.stringify(payload);
  const hmac = createHmac("sha256", stack.env.SHOPIFY_API_SECRET).update(body).digest("base64");
  return fetch(`${stack.app.url}/webhooks/${topic}`, {
    method: "POST",
    body,
    headers: {
      "content-type": "application/json",
      "x-shopify-topic": topic,
      "x-shopify-shop-domain": shop,
      "x-shopify-hmac-sha256": hmac,
      "x-shopify-webhook-id": webhookId,
      "x-shopify-api-version": "2026-04",
      "x-shopify-event-id": randomUUID(),
      "x-shopify-triggered-at": triggeredAt.toISOString(),
    },
  });
}

it("a webhook for shop A signed with shop B's Secret Key is rejected", async () => {
  const { session } = await stack.standin.state.startPayment({ test: true });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  const shopA = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  const body = `{"identifier": "${payment.gatewayOrderId}", "status": "CO"}`;
  const nonce = String(Math.floor(Date.now() / 1000));
  const signedByB = signWebhook({ secretHex: await secretOf(OTHER_SHOP), nonce, rawBody: body });
  const refused = await fetch(`${stack.app.url}/gateway/webhooks/${shopA.webhookToken}`, { method: "POST", body, headers: { "x-nonce": nonce, "x-signature": signedByB } });
  expect(refused.status).toBe(401);
  const signedByA = signWebhook({ secretHex: await secretOf(stack.shopDomain), nonce, rawBody: body });
  const accepted = await fetch(`${stack.app.url}/gateway/webhooks/${shopA.webhookToken}`, { method: "POST", body, headers: { "x-nonce": nonce, "x-signature": signedByA } });
  expect(accepted.status).toBe(200);
  // Accepted, but only a trigger: the order is read back and is still unpaid.
  await waitFor(async () => (await db().gatewayWebhook.count({ where: { shopId: shopA.id, processedAt: null } })) === 0, "processed");
  expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).state).toBe("awaiting_payment");
});

it("a payment session for another shop's payment id creates its own record: shops never share payments", async () => {
  const session = stack.standin.state.createPaymentSession({ test: true });
  const post = (shop: string) =>
    fetch(`${stack.app.url}/payments/session`, {
      method: "POST",
      headers: { "content-type": "application/json", "shopify-shop-domain": shop, "shopify-request-id": randomUUID(), "shopify-api-version": "2026-04" },
      body: JSON.stringify(session.request),
    });
  expect((await post(stack.shopDomain)).status).toBe(200);
  expect((await post(OTHER_SHOP)).status).toBe(200);
  const rows = await db().payment.findMany({ where: { shopifyPaymentId: session.id }, include: { shop: true } });
  expect(rows.map((r) => r.shop.shopDomain).sort()).toEqual([OTHER_SHOP, stack.shopDomain].sort());
  expect(new Set(rows.map((r) => r.gatewayOrderId)).size).toBe(2);
});

it("customers/redact erases the customer's fields from payment records", async () => {
  const { session } = await stack.standin.state.startPayment({ test: true, customer: { email: "erase.me@example.com" } });
  const before = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  expect(before.customerEmail).toBe("erase.me@example.com");
  const response = await shopifyWebhook("customers/redact", { shop_domain: stack.shopDomain, customer: { id: 1, email: "erase.me@example.com", phone: null }, orders_to_redact: [] });
  expect(response.status).toBe(200);
  const after = await db().payment.findUniqueOrThrow({ where: { id: before.id } });
  expect([after.customerEmail, after.customerName, after.customerPhone, after.billingAddress]).toEqual([null, null, null, null]);
  expect(after.amount).toBe(before.amount);
});

it("customers/data_request keeps a report of the customer's payments for the merchant, once per webhook; customers/redact deletes it", async () => {
  const email = "asks.for.data@example.com";
  const { session } = await stack.standin.state.startPayment({ test: true, customer: { email } });
  await stack.standin.state.startPayment({ test: true, customer: { email: "someone.else@example.com" } });
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  const payload = { shop_id: 1, shop_domain: stack.shopDomain, customer: { id: 77, email, phone: null }, orders_requested: [1001], data_request: { id: 9 } };
  const webhookId = randomUUID();
  for (let delivery = 0; delivery < 2; delivery++) expect((await shopifyWebhook("customers/data_request", payload, stack.shopDomain, webhookId)).status).toBe(200);

  const requests = await listCustomerDataRequests(db(), shop.id);
  expect(requests).toHaveLength(1);
  expect(requests[0]).toMatchObject({ customerEmail: email, dataRequestId: "9", paymentCount: 1, downloadedAt: null });
  // Another shop cannot take it; the shop's own download marks it.
  const other = await db().shop.findUniqueOrThrow({ where: { shopDomain: OTHER_SHOP } });
  expect(await takeCustomerDataReport(db(), other.id, requests[0]!.id, new Date())).toBeNull();
  const taken = await takeCustomerDataReport(db(), shop.id, requests[0]!.id, new Date());
  const report = JSON.parse(taken!.report) as { customer: unknown; ordersRequested: string[]; payments: { shopifyPaymentId: string; customerEmail: string; amount: string }[] };
  expect(report.customer).toEqual({ shopifyCustomerId: "77", email, phone: null });
  expect(report.ordersRequested).toEqual(["1001"]);
  expect(report.payments).toEqual([expect.objectContaining({ shopifyPaymentId: session.id, customerEmail: email, amount: expect.any(String) })]);
  expect((await listCustomerDataRequests(db(), shop.id))[0]!.downloadedAt).not.toBeNull();

  const redacted = await shopifyWebhook("customers/redact", { shop_domain: stack.shopDomain, customer: { id: 77, email, phone: null }, orders_to_redact: [] });
  expect(redacted.status).toBe(200);
  expect(await listCustomerDataRequests(db(), shop.id)).toHaveLength(0);
});

it("a phone shared by customers with other e-mails names none of them: data requests and redactions follow the e-mail, the phone only payments without one", async () => {
  const phone = "+34600111222";
  const payment = async (customer: { email?: string; phone_number: string }) => {
    const { session } = await stack.standin.state.startPayment({ test: true, customer });
    return db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  };
  const alice = await payment({ email: "alice.household@example.com", phone_number: phone });
  const bob = await payment({ email: "bob.household@example.com", phone_number: phone });
  const phoneOnly = await payment({ email: undefined, phone_number: phone });
  expect([alice.customerPhone, bob.customerPhone, phoneOnly.customerPhone, phoneOnly.customerEmail]).toEqual([phone, phone, phone, null]);

  const customer = { id: 78, email: "bob.household@example.com", phone };
  const webhookId = randomUUID();
  expect((await shopifyWebhook("customers/data_request", { shop_domain: stack.shopDomain, customer, orders_requested: [] }, stack.shopDomain, webhookId)).status).toBe(200);
  const stored = await db().customerDataRequest.findFirstOrThrow({ where: { webhookId } });
  const report = JSON.parse(stored.report) as { payments: { shopifyPaymentId: string }[] };
  expect(report.payments.map((p) => p.shopifyPaymentId).sort()).toEqual([bob.shopifyPaymentId, phoneOnly.shopifyPaymentId].sort());

  expect((await shopifyWebhook("customers/redact", { shop_domain: stack.shopDomain, customer, orders_to_redact: [] })).status).toBe(200);
  const after = async (id: string) => (await db().payment.findUniqueOrThrow({ where: { id } })).customerName;
  expect(await after(alice.id)).toBe(alice.customerName);
  expect(alice.customerName).not.toBeNull();
  expect([await after(bob.id), await after(phoneOnly.id)]).toEqual([null, null]);
});

it("customers/data_request without a customer object is refused with a 400 and stores nothing", async () => {
  const before = await db().customerDataRequest.count();
  const response = await shopifyWebhook("customers/data_request", { shop_domain: stack.shopDomain, orders_requested: "all" });
  expect(response.status).toBe(400);
  expect(await db().customerDataRequest.count()).toBe(before);
});

it("app/uninstalled deletes the credentials and the tokens; open payments keep their records", async () => {
  const { session } = await stack.standin.state.startPayment({ test: true }, {});
  const open = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  const response = await shopifyWebhook("app/uninstalled", { id: 1, domain: stack.shopDomain }, stack.shopDomain);
  expect(response.status).toBe(200);
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  expect(shop.uninstalledAt).not.toBeNull();
  expect([shop.liveDeviceKeyEnc, shop.sandboxDeviceKeyEnc, shop.sandboxSecretKeyEnc]).toEqual([null, null, null]);
  expect(await db().session.count({ where: { shop: stack.shopDomain } })).toBe(0);
  expect(await db().payment.count({ where: { id: open.id } })).toBe(1);
  const refused = await stack.standin.state.startPayment({ test: true });
  expect(refused.delivery.status).toBe(422);
});

it("an app/uninstalled that Shopify retries after the merchant installed the app again leaves the new install alone", async () => {
  // Installed again (the admin opened, the sandbox connected) after the uninstall above.
  const uninstalledAt = new Date();
  await new Promise((resolve) => setTimeout(resolve, 5));
  await connectSandbox(stack.services, stack.shopDomain);
  const installed = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  expect(installed.uninstalledAt).toBeNull();
  expect(installed.installedAt!.getTime()).toBeGreaterThan(uninstalledAt.getTime());

  const late = await shopifyWebhook("app/uninstalled", { id: 1, domain: stack.shopDomain }, stack.shopDomain, randomUUID(), uninstalledAt);
  expect(late.status).toBe(200);
  const kept = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  expect(kept.uninstalledAt).toBeNull();
  expect(kept.sandboxDeviceKeyEnc).not.toBeNull();

  // One triggered after the new install is a real uninstall.
  expect((await shopifyWebhook("app/uninstalled", { id: 1, domain: stack.shopDomain }, stack.shopDomain)).status).toBe(200);
  expect((await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } })).uninstalledAt).not.toBeNull();
});

it("shop/redact deletes everything held for the shop", async () => {
  expect((await shopifyWebhook("customers/data_request", { shop_domain: OTHER_SHOP, customer: { id: 5, email: "x@example.com" } }, OTHER_SHOP)).status).toBe(200);
  expect(await db().customerDataRequest.count({ where: { shop: { shopDomain: OTHER_SHOP } } })).toBe(1);
  const response = await shopifyWebhook("shop/redact", { shop_id: 1, shop_domain: OTHER_SHOP }, OTHER_SHOP);
  expect(response.status).toBe(200);
  expect(await db().customerDataRequest.count({ where: { shop: { shopDomain: OTHER_SHOP } } })).toBe(0);
  expect(await db().shop.count({ where: { shopDomain: OTHER_SHOP } })).toBe(0);
  expect(await db().payment.count({ where: { shop: { shopDomain: OTHER_SHOP } } })).toBe(0);
});
