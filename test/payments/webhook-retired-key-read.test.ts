// A notification signed with the Secret Key of credentials the merchant removed or replaced
// (perhaps because they leaked) is taken only for a payment begun on them, and even then not
// at its word: the order is read from the gateway first, with their device key. A forged "paid"
// for an order the gateway shows unpaid tells Shopify nothing; a true one settles the payment
// from the read.
import { expect, it } from "vitest";
import { deliverDueMessages } from "../../app/payments/outbox";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { connectAnotherSandboxDevice, sendGatewayWebhook, stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });
const db = () => stack().services.db;
const shopRow = () => db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });

/** A payment whose gateway order waits for the shopper's coins (PE), and the Secret Key it was made with, since replaced. */
async function paymentOnReplacedDevice() {
  const { session } = await stack().standin.state.startPayment({ test: true, amount: "25.50", currency: "EUR" });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  const orderId = payment.gatewayOrderId!;
  await stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, { action: "choose_currency", currency: "BTC" });
  const shop = await shopRow();
  const oldSecret = stack().services.cipher.decrypt(shop.sandboxSecretKeyEnc!, credentialContext(shop.id, "sandbox", "secret-key"));
  await connectAnotherSandboxDevice(stack());
  return { session, payment, orderId, oldSecret };
}

const postSigned = (secretHex: string, body: string) => sendGatewayWebhook(stack(), secretHex, body);

async function processAndDeliver() {
  await processWebhookInbox(stack().services, { worker: "t" });
  await deliverDueMessages(stack().services, { worker: "t" });
}

it("a CO signed with the replaced Secret Key, for an order the gateway shows unpaid, leaves the payment open and Shopify untold", async () => {
  const { session, payment, orderId, oldSecret } = await paymentOnReplacedDevice();
  expect(await postSigned(oldSecret, `{"fiat_amount": 25.5, "status": "CO", "identifier": "${orderId}"}`)).toBe(200);
  await processAndDeliver();

  expect(stack().standin.state.session(session.id)?.state.code).not.toBe("RESOLVED");
  const after = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(after.state).toBe("awaiting_payment");
  expect(after.gatewayStatus).toBe("PE");
});

it("the gateway's own CO for an order paid on the replaced device settles the payment from a read", async () => {
  const { session, payment, orderId } = await paymentOnReplacedDevice();
  for (const action of [{ action: "pay", amount: "exact" }, { action: "confirm" }]) await stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, action);
  // The sandbox's notifications, signed with the replaced device's Secret Key, reach the door.
  await expect.poll(async () => db().gatewayWebhook.count({ where: { orderId, status: "CO" } }), { timeout: 10_000 }).toBe(1);
  await processAndDeliver();

  const after = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(after.state).toBe("paid");
  // Settled from the gateway's record, not from the notification alone.
  expect(after.unverifiedSince).toBeNull();
  expect(stack().standin.state.session(session.id)?.state.code).toBe("RESOLVED");
});
