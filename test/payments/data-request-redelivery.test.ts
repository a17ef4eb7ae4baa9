// Shopify redelivers a webhook (same X-Shopify-Webhook-Id) when it did not get the app's 200 in
// time, for up to 48 hours. A customers/data_request delivered again stores nothing more, also
// once its request is gone: the customer was redacted since (their data must not come back), or
// the merchant answered and deleted the request (it must not come back as a new one).
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { postAdminForm } from "../support/admin-pages";
import { paymentColumns } from "../support/payment-rows";
import { sendShopifyWebhook } from "../support/shopify-webhooks";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
const db = () => stack().services.db;

const shopifyWebhook = (topic: string, payload: unknown, webhookId?: string) => sendShopifyWebhook(stack(), topic, payload, webhookId ? { webhookId } : {});

it("a customers/data_request redelivered after customers/redact erased the customer stores none of the customer's data again", async () => {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  const customer = { id: 901, email: "erased.customer@example.com", phone: "+34611999000" };
  await db().payment.create({ data: paymentColumns(shop.id, { customerEmail: customer.email, customerName: "Erased Customer", customerPhone: customer.phone }) });
  const dataRequest = { shop_domain: stack().shopDomain, customer, orders_requested: [], data_request: { id: 4401 } };
  const webhookId = randomUUID();

  expect((await shopifyWebhook("customers/data_request", dataRequest, webhookId)).status).toBe(200);
  expect((await shopifyWebhook("customers/redact", { shop_domain: stack().shopDomain, customer, orders_to_redact: [] })).status).toBe(200);
  const heldOfCustomer = () => db().customerDataRequest.findMany({ where: { shopId: shop.id, OR: [{ customerEmail: customer.email }, { customerPhone: customer.phone }] } });
  expect(await heldOfCustomer()).toEqual([]);

  // Shopify's retry of the first delivery (its 200 came too late) arrives after the redaction.
  expect((await shopifyWebhook("customers/data_request", dataRequest, webhookId)).status).toBe(200);
  const after = await heldOfCustomer();
  expect(after.map((r) => ({ email: r.customerEmail, phone: r.customerPhone })), "the redacted customer's e-mail and phone are stored again").toEqual([]);
});

it("a customers/data_request redelivered after the merchant answered and deleted it does not come back as a new request", async () => {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  const customer = { id: 902, email: "answered.customer@example.com", phone: null };
  const dataRequest = { shop_domain: stack().shopDomain, customer, orders_requested: [], data_request: { id: 4402 } };
  const webhookId = randomUUID();

  expect((await shopifyWebhook("customers/data_request", dataRequest, webhookId)).status).toBe(200);
  const stored = await db().customerDataRequest.findFirstOrThrow({ where: { shopId: shop.id, webhookId } });
  // The merchant downloads the report, sends it on and deletes the request from the admin.
  expect((await postAdminForm(stack(), "/app/data-requests", { intent: "download", id: stored.id })).status).toBe(200);
  expect((await postAdminForm(stack(), "/app/data-requests", { intent: "delete", id: stored.id, confirm: "yes" })).status).toBe(200);
  expect(await db().customerDataRequest.count({ where: { shopId: shop.id, webhookId } })).toBe(0);

  // The same webhook, delivered again.
  expect((await shopifyWebhook("customers/data_request", dataRequest, webhookId)).status).toBe(200);
  expect(await db().customerDataRequest.count({ where: { shopId: shop.id, webhookId } }), "the answered request is back, undownloaded, on the Data requests page").toBe(0);
});
