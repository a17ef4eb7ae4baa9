// A device replaced while a payment on it was in progress (say, because its key leaked) keeps
// its credentials, out of use, only for the payments begun on it: once those no longer need
// them the retention pass deletes them, whatever the payments on the new device, and until
// then its Secret Key verifies the notifications of those payments alone. A notification
// signed with it for an order of the new device is refused as forged, and tells Shopify nothing.
import { expect, it } from "vitest";
import { checkPaymentNow } from "../../app/payments/check-payment";
import { deliverDueMessages } from "../../app/payments/outbox";
import { DEFAULT_CUSTOMER_DATA_RETENTION_DAYS, DEFAULT_RETENTION_DAYS, purgeExpiredRows } from "../../app/payments/retention";
import { connectGateway } from "../../app/shops/onboarding.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { deviceChangeSteps } from "../support/device-change";
import { stackForFile, waitFor } from "../support/stack";
import { refusalsCounted } from "../support/refusals";

const stack = stackForFile({ workers: false });
const { db, act, shopRow, drainInbox, pendingPayment, dedicatedDevice, sendSigned, completedBody } = deviceChangeSteps(stack);
const completed = (secretHex: string, payment: Parameters<typeof completedBody>[0]) => sendSigned(secretHex, completedBody(payment));

const purge = () => purgeExpiredRows(stack().services, { retentionDays: DEFAULT_RETENTION_DAYS, customerDataDays: DEFAULT_CUSTOMER_DATA_RETENTION_DAYS });

it("a replaced device's Secret Key verifies only the payments begun on it, and its credentials go once those are over, whatever the new device's payments", async () => {
  // A payment on the first device, then the merchant replaces the device.
  const onOld = await pendingPayment();
  const old = await shopRow();
  const oldSecret = stack().services.cipher.decrypt(old.sandboxSecretKeyEnc!, credentialContext(old.id, "sandbox", "secret-key"));
  const connected = await connectGateway(stack().services, stack().shopDomain, { env: "sandbox", ...(await dedicatedDevice()) });
  expect(connected).toMatchObject({ ok: true, shop: { sandboxRetiredSecretKeyEnc: old.sandboxSecretKeyEnc } });

  // A shopper checks out on the new device.
  const onNew = await pendingPayment();
  expect((await shopRow()).sandboxDeviceKeyEnc).not.toBe(old.sandboxDeviceKeyEnc);
  const refused = await refusalsCounted(db(), { shopId: old.id, reason: "bad_signature" });

  // A "completed" notification signed with the old Secret Key for the new device's unpaid order
  // is refused as forged, and recorded with the other refusals: the order stays unpaid.
  expect(await completed(oldSecret, onNew.payment)).toBe(401);
  expect(await refusalsCounted(db(), { shopId: old.id, reason: "bad_signature" })).toBe(refused + 1);
  await drainInbox();
  await deliverDueMessages(stack().services, { worker: "t" });
  expect(await db().payment.findUniqueOrThrow({ where: { id: onNew.payment.id } })).toMatchObject({ state: "awaiting_payment" });
  expect(stack().standin.state.session(onNew.session.id)?.state.code).not.toBe("RESOLVED");
  expect(await db().gatewayWebhook.count({ where: { orderId: onNew.orderId, status: "CO" } })).toBe(0);

  // The payment on the old device ends: its notification, signed with the old key, is taken, and a read checks it.
  expect((await purge()).retiredDevices).toBe(0);
  await act(onOld.orderId, { action: "pay", amount: "exact" });
  await act(onOld.orderId, { action: "confirm" });
  await waitFor(async () => (await db().gatewayWebhook.count({ where: { orderId: onOld.orderId, status: "CO" } })) > 0, "the CO webhook stored");
  await drainInbox();
  expect(await checkPaymentNow(stack().services, old.id, onOld.payment.id)).toMatchObject({ ok: true, state: "paid" });
  expect(await db().payment.findUniqueOrThrow({ where: { id: onOld.payment.id } })).toMatchObject({ state: "paid", unverifiedSince: null });

  // Nothing begun on the old device needs its credentials, though the new device's payment is in progress: they go.
  expect((await purge()).retiredDevices).toBe(1);
  expect(await shopRow()).toMatchObject({ sandboxRetiredDeviceKeyEnc: null, sandboxRetiredSecretKeyEnc: null, sandboxRetiredAt: null });
  expect(await completed(oldSecret, onOld.payment)).toBe(401);

  // The new device's own notification settles its payment.
  await act(onNew.orderId, { action: "pay", amount: "exact" });
  await act(onNew.orderId, { action: "confirm" });
  await waitFor(async () => (await db().gatewayWebhook.count({ where: { orderId: onNew.orderId, status: "CO" } })) > 0, "the new device's CO webhook stored");
  await drainInbox();
  await deliverDueMessages(stack().services, { worker: "t" });
  expect(await db().payment.findUniqueOrThrow({ where: { id: onNew.payment.id } })).toMatchObject({ state: "paid" });
  expect(stack().standin.state.session(onNew.session.id)?.state.code).toBe("RESOLVED");
});
