// Shopify signs a webhook's body, not its X-Shopify-Topic header: a body Shopify delivered for
// one topic, posted again under another's, is refused (400) and does nothing, instead of a data
// request's body deleting an installed shop as its shop/redact, or a redaction's body
// uninstalling one. The schemas themselves: test/unit/shopify-webhook-bodies.test.ts.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectSandbox } from "../../app/shops/onboarding.server";
import { paymentColumns } from "../support/payment-rows";
import { sendShopifyWebhook } from "../support/shopify-webhooks";
import { startStack, type Stack } from "../support/stack";

const SHOP_A = "topic-replay-a.myshopify.com";
const SHOP_B = "topic-replay-b.myshopify.com";
const SHOP_C = "topic-replay-c.myshopify.com";
const SHOP_D = "topic-replay-d.myshopify.com";
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ workers: false });
  // The stack checks its log for secrets and wants a line to check.
  stack.logger.info("webhook body topic: started");
  for (const shop of [SHOP_A, SHOP_B, SHOP_C, SHOP_D]) {
    const connected = await connectSandbox(stack.services, shop);
    if (!connected.ok) throw new Error(connected.message);
    // Established shops: installed three days ago, still installed.
    await stack.services.db.shop.update({ where: { shopDomain: shop }, data: { installedAt: new Date(Date.now() - 3 * 86_400_000) } });
  }
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

const db = () => stack.services.db;

it("a signed customers/data_request body of shop A, posted again as shop/redact, does not delete installed shop A", async () => {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: SHOP_A } });
  await db().payment.create({ data: paymentColumns(shop.id, { state: "paid" }) });
  // Shopify's own data request body for shop A, byte for byte (and so its HMAC), but the
  // unsigned X-Shopify-Topic says shop/redact.
  const dataRequestBody = { shop_id: 1, shop_domain: SHOP_A, customer: { id: 7, email: "someone@example.com", phone: null }, orders_requested: [], data_request: { id: 1 } };
  const response = await sendShopifyWebhook(stack, "shop/redact", dataRequestBody, { shop: SHOP_A, webhookId: randomUUID() });
  expect(await db().shop.count({ where: { id: shop.id } }), "installed shop A and its payments were deleted by a replayed data request").toBe(1);
  expect(await db().payment.count({ where: { shopId: shop.id } })).toBe(1);
  expect(response.status, "a body that is not a shop/redact payload is refused").toBe(400);
  expect(((await response.json()) as { error: string }).error).toBe("wrong_body");
});

it("a signed app/scopes_update body (it names no shop), posted as shop/redact under shop B's header, does not delete shop B", async () => {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: SHOP_B } });
  await db().payment.create({ data: paymentColumns(shop.id, { state: "paid" }) });
  const scopesBody = { id: 5, previous: ["write_payment_gateways"], current: ["write_payment_gateways", "write_payment_sessions"], updated_at: "2026-01-01T00:00:00Z" };
  const response = await sendShopifyWebhook(stack, "shop/redact", scopesBody, { shop: SHOP_B });
  await response.body?.cancel();
  expect(await db().shop.count({ where: { id: shop.id } }), "shop B was deleted by a replayed scopes_update body").toBe(1);
  expect(response.status).toBe(400);
});

it("a signed customers/redact body of shop C, posted as app/uninstalled, leaves shop C installed with its credentials", async () => {
  const before = await db().shop.findUniqueOrThrow({ where: { shopDomain: SHOP_C } });
  expect(before.sandboxDeviceKeyEnc).not.toBeNull();
  const redactBody = { shop_id: 2, shop_domain: SHOP_C, customer: { id: 8, email: "other@example.com", phone: null }, orders_to_redact: [] };
  const response = await sendShopifyWebhook(stack, "app/uninstalled", redactBody, { shop: SHOP_C });
  await response.body?.cancel();
  const after = await db().shop.findUniqueOrThrow({ where: { shopDomain: SHOP_C } });
  expect({ uninstalledAt: after.uninstalledAt, credentials: after.sandboxDeviceKeyEnc !== null }, "a replayed customers/redact body uninstalled shop C").toEqual({ uninstalledAt: null, credentials: true });
  expect(response.status).toBe(400);
});

it("a signed customers/data_request body, posted as customers/redact, erases nothing of the customer who only asked for their data", async () => {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: SHOP_D } });
  const email = "only.asked@example.com";
  const payment = await db().payment.create({ data: paymentColumns(shop.id, { state: "paid", customerEmail: email, customerName: "Only Asked" }) });
  const dataRequestBody = { shop_id: 4, shop_domain: SHOP_D, customer: { id: 9, email, phone: null }, orders_requested: [], data_request: { id: 3 } };
  const response = await sendShopifyWebhook(stack, "customers/redact", dataRequestBody, { shop: SHOP_D });
  await response.body?.cancel();
  const after = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect({ email: after.customerEmail, name: after.customerName }, "a data request, replayed under the redact topic, erased the customer's records").toEqual({ email, name: "Only Asked" });
  expect(response.status).toBe(400);
});
