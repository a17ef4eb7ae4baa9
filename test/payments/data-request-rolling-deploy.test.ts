// Rolling deploy across migration 20261129020000_data_request_deliveries (commit 721e425): the
// migration copies the CustomerDataRequest rows that exist when it runs into DataRequestDelivery,
// but the instances of the previous release keep serving until they are replaced, and they take
// customers/data_request webhooks the way that release did: a CustomerDataRequest row (an upsert
// on shopId + webhookId), and no DataRequestDelivery row, which that release does not know.
// Shopify redelivers such a webhook (same X-Shopify-Webhook-Id) for up to 48 hours when the 200
// came late, and the load balancer sends the redelivery to an instance of the new release: it
// is answered 200 and stored once (not a unique-constraint 500 at every redelivery).
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { sendShopifyWebhook } from "../support/shopify-webhooks";
import { stackOnDatabase } from "../support/stack";

const logLines: string[] = [];
const stack = stackOnDatabase("postgresql", { workers: false, logLines });
const db = () => stack().services.db;

/** What an instance of the release before 721e425 stores for a customers/data_request (its recordCustomerDataRequest's upsert). */
async function storedByPreviousRelease(webhookId: string, customer: { email: string }) {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  const receivedAt = new Date();
  return db().customerDataRequest.upsert({
    where: { shopId_webhookId: { shopId: shop.id, webhookId } },
    update: {},
    create: {
      shopId: shop.id,
      webhookId,
      dataRequestId: "5501",
      customerEmail: customer.email,
      customerPhone: null,
      report: JSON.stringify({ shopDomain: stack().shopDomain, receivedAt: receivedAt.toISOString(), payments: [] }),
      paymentCount: 0,
      receivedAt,
    },
  });
}

it("a customers/data_request an instance of the previous release took is redelivered to a new instance: answered 200, stored once", async () => {
  const customer = { id: 5501, email: "rolling.customer@example.com", phone: null };
  const payload = { shop_domain: stack().shopDomain, customer, orders_requested: [], data_request: { id: 5501 } };
  const webhookId = randomUUID();

  // The migration has run (this database has every migration); an old instance still serving takes the first delivery.
  await storedByPreviousRelease(webhookId, customer);
  expect(await db().dataRequestDelivery.count({ where: { webhookId } })).toBe(0);

  // Shopify's redelivery lands on an instance of the new release.
  const redelivered = await sendShopifyWebhook(stack(), "customers/data_request", payload, { webhookId });
  const failure = logLines.find((line) => line.includes("CustomerDataRequest") || line.includes("Unique constraint") || line.includes("P2002"));
  expect(redelivered.status, `the redelivery was answered ${redelivered.status}; log: ${failure?.slice(0, 400) ?? "(none)"}`).toBe(200);
  expect(await db().customerDataRequest.count({ where: { webhookId } })).toBe(1);
  // Taken from now on: deleted by the merchant, a later redelivery stores nothing again.
  expect(await db().dataRequestDelivery.count({ where: { webhookId } })).toBe(1);
  await db().customerDataRequest.deleteMany({ where: { webhookId } });
  const again = await sendShopifyWebhook(stack(), "customers/data_request", payload, { webhookId });
  expect(again.status).toBe(200);
  expect(await db().customerDataRequest.count({ where: { webhookId } })).toBe(0);
});
