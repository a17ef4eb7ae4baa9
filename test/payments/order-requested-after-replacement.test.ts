// A payment started on the app's own page (the shopper picks the coin there) before the merchant
// replaces the device, whose coin is picked after: its gateway order is made on the new device,
// with the new device's key. It began on the new device, not on the replaced one, although it
// was created before: the replaced (perhaps leaked) Secret Key verifies none of its
// notifications, and the new device's credentials are kept for it when that device is replaced
// in turn.
import { expect, it } from "vitest";
import { deliverDueMessages } from "../../app/payments/outbox";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import { createOrderWithCurrency } from "../../app/payments/start-payment-session";
import { checkPaymentNow } from "../../app/payments/check-payment";
import { connectGateway, connectSandbox } from "../../app/shops/onboarding.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { deviceChangeSteps } from "../support/device-change";
import { stackForFile, waitFor } from "../support/stack";
import { refusalsCounted } from "../support/refusals";

const stack = stackForFile({ workers: false });
const { db, shopRow, act, dedicatedDevice, sendSigned, completedBody } = deviceChangeSteps(stack);
const completed = (secretHex: string, payment: Parameters<typeof completedBody>[0]) => sendSigned(secretHex, completedBody(payment));


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
  const refusedBefore = await refusalsCounted(db(), { shopId: onC.id });
  await act(payment.gatewayOrderId!, { action: "pay", amount: "exact" });
  await act(payment.gatewayOrderId!, { action: "confirm" });
  await waitFor(() => db().gatewayWebhook.count({ where: { orderId: payment.gatewayOrderId, status: "CO" } }), "B's CO notification stored");
  expect(await refusalsCounted(db(), { shopId: onC.id })).toBe(refusedBefore);
  expect(await checkPaymentNow(stack().services, started.shopId, started.id)).toMatchObject({ ok: true, state: "paid" });
});
