// A replaced device's credentials kept for the payments begun on it, sealed under an encryption
// key the app no longer holds (dropped before `credentials:rotate` re-sealed them), while the
// device in use is sealed under the current key. The device in use goes on working: its
// payments' notifications settle them, a manual check and the reconciler read its orders. Only
// the payments begun on the replaced device are left unread, and then as "try later", never
// as orders the gateway does not have.
import { expect, it } from "vitest";
import { checkPaymentNow } from "../../app/payments/check-payment";
import { deliverDueMessages } from "../../app/payments/outbox";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import { FINALISE_AFTER_MS, reconcileOnce } from "../../app/payments/reconcile";
import { connectGateway, connectSandbox } from "../../app/shops/onboarding.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { deviceChangeSteps } from "../support/device-change";
import { stackForFile, waitFor } from "../support/stack";

let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };

const stack = stackForFile({ workers: false, clock });
const { db, shopRow, pendingPayment, shopperPays, dedicatedDevice } = deviceChangeSteps(stack, clock);


/** Seals the shop's retired sandbox pair under a key id the app does not have, as after that key was dropped. */
async function loseRetiredKey(): Promise<void> {
  const shop = await shopRow();
  expect(shop.sandboxRetiredDeviceKeyEnc).not.toBeNull();
  const underLostKey = (sealed: string) => sealed.split(":").map((part, i) => (i === 1 ? "lost" : part)).join(":");
  await db().shop.update({
    where: { id: shop.id },
    data: { sandboxRetiredDeviceKeyEnc: underLostKey(shop.sandboxRetiredDeviceKeyEnc!), sandboxRetiredSecretKeyEnc: underLostKey(shop.sandboxRetiredSecretKeyEnc!) },
  });
}

it("retired credentials no key opens do not stop the device in use from settling and reading its own payments", async () => {
  await pendingPayment();
  const connected = await connectGateway(stack().services, stack().shopDomain, { env: "sandbox", ...(await dedicatedDevice()) });
  expect(connected).toMatchObject({ ok: true });
  await loseRetiredKey();

  // A shopper pays on the device in use; its signed "completed" notification is taken at the door.
  const onNew = await pendingPayment();
  await shopperPays(onNew.orderId);
  await waitFor(async () => (await db().gatewayWebhook.count({ where: { orderId: onNew.orderId, status: "CO" } })) > 0, "the CO webhook stored");

  await processWebhookInbox(stack().services, { worker: "t" });
  await deliverDueMessages(stack().services, { worker: "t" });
  const hook = await db().gatewayWebhook.findFirstOrThrow({ where: { orderId: onNew.orderId, status: "CO" } });
  expect(hook).toMatchObject({ processedAt: expect.any(Date), lastError: null });
  expect(await db().payment.findUniqueOrThrow({ where: { id: onNew.payment.id } })).toMatchObject({ state: "paid", gatewayStatus: "CO" });
  expect(stack().standin.state.session(onNew.session.id)?.state.code).toBe("RESOLVED");

  const check = await checkPaymentNow(stack().services, onNew.payment.shopId, onNew.payment.id);
  expect(check).toMatchObject({ ok: true, state: "paid" });
});

it("after the sandbox is reconnected and the retired key is lost, the reconciler still reads the device in use, and a replaced device's order is left for later, not gone", async () => {
  const onOld = await pendingPayment();
  const connected = await connectSandbox(stack().services, stack().shopDomain);
  expect(connected).toMatchObject({ ok: true });
  await loseRetiredKey();
  await shopperPays(onOld.orderId);

  // The new merchant's device does not know the previous device's order, and no key opens that device's credentials.
  const check = await checkPaymentNow(stack().services, onOld.payment.shopId, onOld.payment.id);
  expect(check).toMatchObject({ ok: false, reason: "gateway_error" });

  // A payment on the device in use whose notification is lost: only the reconciler can settle it.
  const shop = await shopRow();
  const currentKey = stack().services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"));
  const faults = `/sandbox/devices/${currentKey}/webhook-faults`;
  await stack().sandboxControl(faults, { mode: "drop" });
  try {
    const onNew = await pendingPayment();
    await shopperPays(onNew.orderId);
    offsetMs += FINALISE_AFTER_MS + 60_000;
    const summary = await reconcileOnce(stack().services, { worker: "t" });
    const newState = await db().payment.findUniqueOrThrow({ where: { id: onNew.payment.id } });
    const oldState = await db().payment.findUniqueOrThrow({ where: { id: onOld.payment.id } });
    expect(summary).toMatchObject({ settled: 1, finalised: 0 });
    expect(newState).toMatchObject({ state: "paid", gatewayStatus: "CO" });
    // Its order could not be read: it is asked again later, not finalised as one the gateway does not have.
    expect(oldState.state).not.toBe("failed");
  } finally {
    await stack().sandboxControl(faults, { mode: "deliver" });
  }
});
