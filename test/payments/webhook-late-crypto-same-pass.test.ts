// Crypto paid after an order expired, its webhook (EX again, with a new version of the order)
// processed in the same inbox pass as the EX that settled the payment: the workers were down
// for a while, or both came close together. It is read and flagged as a late payment, as when
// it comes in a later pass, not dropped as a repeat of the webhook that settled the payment.
// Real stack: the gateway sandbox over HTTP, the Shopify stand-in, SQLite.
import { expect, it } from "vitest";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { sendGatewayWebhook, stackForFile, waitFor } from "../support/stack";

let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };
const stack = stackForFile({ workers: false, clock, gatewayLimits: "spec" });
const db = () => stack().services.db;
const act = (orderId: string, body: Record<string, string>) => stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, body);
const shopRow = () => db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });

/** Posts a webhook signed with the shop's own sandbox Secret Key, as the gateway would, on the tests' clock. */
async function postSignedWebhook(body: string): Promise<number> {
  const shop = await shopRow();
  return sendGatewayWebhook(stack(), stack().services.cipher.decrypt(shop.sandboxSecretKeyEnc!, credentialContext(shop.id, "sandbox", "secret-key")), body, clock.now());
}

it("crypto paid after EX, its webhook in the same pass as the EX that settled the payment, is read and flagged, not taken for a repeat", async () => {
  const { session } = await stack().standin.state.startPayment({ test: true, amount: "25.50", currency: "EUR" });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  const orderId = payment.gatewayOrderId!;
  await act(orderId, { action: "choose_currency", currency: "BTC" });
  await act(orderId, { action: "expire" });
  const expired = await waitFor(async () => {
    const deliveries = (await stack().sandboxControl(`/sandbox/webhooks/deliveries?order=${orderId}`, undefined, "GET")) as { status: string; body: string }[];
    return deliveries.find((d) => d.status === "EX")?.body;
  }, "the sandbox's EX webhook");
  // The sandbox's own delivery is stored; the inbox has not run yet. The shopper pays late: the
  // gateway keeps EX, records the transaction and notifies with the order's new edited_at.
  await waitFor(async () => (await db().gatewayWebhook.count({ where: { orderId, status: "EX" } })) > 0, "the EX webhook stored");
  await act(orderId, { action: "pay", amount: "exact" });
  const access = stack().services.gateways.forShop(await shopRow(), "sandbox")!;
  const editedAt = (await access.client.orderInfo(orderId))._unsafeUnwrap().edited_at;
  const late = JSON.stringify({ ...JSON.parse(expired), edited_at: editedAt });
  offsetMs += 1_000;
  expect(await postSignedWebhook(late)).toBe(200);

  await processWebhookInbox(stack().services, { worker: "t" });
  const flagged = await db().payment.findUniqueOrThrow({ where: { id: payment.id }, include: { transactions: true } });
  expect(flagged).toMatchObject({ state: "failed", gatewayStatus: "EX", attention: "late_payment" });
  expect(flagged.transactions).toHaveLength(1);
  const lateRow = await db().gatewayWebhook.findFirstOrThrow({ where: { orderId, rawBody: late } });
  expect(lateRow.processedAt).not.toBeNull();
  expect(lateRow.lastError).toBeNull();
});
