// A payment started on the app's own page (the shopper picks the coin there) before the merchant
// replaces the device, whose coin is picked after: its gateway order is made on the new device,
// with the new device's key. It began on the new device, not on the replaced one, although it
// was created before: the replaced (perhaps leaked) Secret Key verifies none of its
// notifications, and the new device's credentials are kept for it when that device is replaced
// in turn.
import { expect, it } from "vitest";
import { signWebhook } from "../../app/gateway/webhook-signature";
import { deliverDueMessages } from "../../app/payments/outbox";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import { createOrderWithCurrency } from "../../app/payments/start-payment-session";
import { checkPaymentNow } from "../../app/payments/check-payment";
import { connectGateway, connectSandbox, createDedicatedDevice, notificationUrl } from "../../app/shops/onboarding.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { stackForFile, waitFor } from "../support/stack";

const stack = stackForFile({ workers: false });

const db = () => stack().services.db;
const shopRow = () => db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
const act = (orderId: string, body: Record<string, string>) => stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, body);

/** A "completed" notification of the payment's order signed with `secretHex`: the door's answer. */
async function completed(secretHex: string, payment: { gatewayOrderId: string | null; amount: string; currency: string }): Promise<number> {
  const shop = await shopRow();
  const body = `{"identifier": "${payment.gatewayOrderId}", "status": "CO", "fiat_amount": ${payment.amount}, "fiat_currency": "${payment.currency}"}`;
  const nonce = String(Math.floor(Date.now() / 1000));
  const response = await fetch(`${stack().app.url}/gateway/webhooks/${shop.webhookToken}`, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", "x-nonce": nonce, "x-signature": signWebhook({ secretHex, nonce, rawBody: body }) },
  });
  await response.body?.cancel();
  return response.status;
}

/** A device of the sandbox merchant connected now, with a Secret Key of its own. */
async function dedicatedDevice() {
  const created = await createDedicatedDevice(stack().services, stack().shopDomain, "sandbox", "Replacement");
  if (!created.ok) throw new Error(`no device created: ${created.message}`);
  const settings = { regenerate_secret: true, notification_url: notificationUrl(stack().app.url, await shopRow()) };
  const device = (await stack().sandboxControl(`/sandbox/devices/${created.device.identifier}/settings`, settings)) as { secret_key: string };
  return { deviceKey: created.device.identifier, secretKeyHex: device.secret_key };
}

/** A payment on the app's own page, its coin not picked yet. */
async function startedOnAppPage() {
  await db().shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
  const { session } = await stack().standin.state.startPayment({ test: true });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  expect(payment).toMatchObject({ state: "started", gatewayOrderId: null, orderRequestedAt: null });
  return { session, payment };
}

it("the replaced device's Secret Key does not settle an order made on the new device for a payment created before the replacement", async () => {
  const { session, payment: started } = await startedOnAppPage();

  // The merchant replaces the device (its Secret Key leaked, say) while the shopper is on the page.
  const old = await shopRow();
  const oldSecret = stack().services.cipher.decrypt(old.sandboxSecretKeyEnc!, credentialContext(old.id, "sandbox", "secret-key"));
  const connected = await connectGateway(stack().services, stack().shopDomain, { env: "sandbox", ...(await dedicatedDevice()) });
  expect(connected).toMatchObject({ ok: true, shop: { sandboxRetiredSecretKeyEnc: old.sandboxSecretKeyEnc } });

  // The shopper picks the coin now: the order is made with the new device's key.
  expect(await createOrderWithCurrency(stack().services, started.id, "BTC")).toMatchObject({ ok: true });
  const payment = await db().payment.findUniqueOrThrow({ where: { id: started.id } });
  expect((await stack().services.gateways.forShop(await shopRow(), "sandbox")!.client.orderInfo(payment.gatewayOrderId!)).isOk()).toBe(true);

  const status = await completed(oldSecret, payment);
  await processWebhookInbox(stack().services, { worker: "t" });
  await deliverDueMessages(stack().services, { worker: "t" });
  const after = await db().payment.findUniqueOrThrow({ where: { id: started.id } });
  expect({ status, state: after.state }).toEqual({ status: 401, state: "awaiting_payment" });
  expect(stack().standin.state.session(session.id)?.state.code).not.toBe("RESOLVED");
});

it("a payment whose coin was picked on the replacing device keeps that device's credentials when it is replaced in turn", async () => {
  // Each sandbox connection signs up a merchant of its own: no device reads another's orders.
  expect(await connectSandbox(stack().services, stack().shopDomain)).toMatchObject({ ok: true });
  const { payment: started } = await startedOnAppPage();

  // Device B replaces device A while the payment waits for its coin, which is picked on B.
  expect(await connectSandbox(stack().services, stack().shopDomain)).toMatchObject({ ok: true });
  expect(await createOrderWithCurrency(stack().services, started.id, "BTC")).toMatchObject({ ok: true });
  const onB = await shopRow();
  const payment = await db().payment.findUniqueOrThrow({ where: { id: started.id } });

  // Device C replaces B while the shopper is paying B's order: B serves this payment and is kept.
  expect(await connectSandbox(stack().services, stack().shopDomain)).toMatchObject({ ok: true });
  const onC = await shopRow();
  expect(onC.sandboxRetiredDeviceKeyEnc).toBe(onB.sandboxDeviceKeyEnc);

  // The shopper pays B's order in full: B's own notification is taken, and its order read.
  const refusedBefore = await db().rejectedWebhook.count({ where: { shopId: onC.id } });
  await act(payment.gatewayOrderId!, { action: "pay", amount: "exact" });
  await act(payment.gatewayOrderId!, { action: "confirm" });
  await waitFor(() => db().gatewayWebhook.count({ where: { orderId: payment.gatewayOrderId, status: "CO" } }), "B's CO notification stored");
  expect(await db().rejectedWebhook.count({ where: { shopId: onC.id } })).toBe(refusedBefore);
  expect(await checkPaymentNow(stack().services, started.shopId, started.id)).toMatchObject({ ok: true, state: "paid" });
});
