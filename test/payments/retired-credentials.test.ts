// A merchant removes a gateway's credentials while payments on them are still followed: no
// new payment starts on them, but they are kept, sealed and out of use, to finish the payments
// in progress (their notifications are verified and settle them, the reconciler and the
// shopper's return read their orders) and to watch rejected ones for crypto sent late, and
// deleted once none needs them. Without such payments, they are deleted at once. Connecting
// another device in their place keeps them the same way.
import { expect, it } from "vitest";
import { paymentsFollowed } from "../../app/admin/connection.server";
import { deliverDueMessages } from "../../app/payments/outbox";
import { LATE_PAYMENT_WATCH_MS } from "../../app/payments/payment-state";
import { LATE_PAYMENT_RECHECK_MS, reconcileOnce } from "../../app/payments/reconcile";
import { DEFAULT_CUSTOMER_DATA_RETENTION_DAYS, DEFAULT_RETENTION_DAYS, purgeExpiredRows } from "../../app/payments/retention";
import { connectGateway, connectSandbox, credentialsVersion, removeGatewayCredentials } from "../../app/shops/onboarding.server";
import { credentialContext, rotateCredentialEncryption } from "../../app/shops/shop-credentials.server";
import { createCredentialCipher } from "../../app/shops/credential-cipher.server";
import { deviceChangeSteps } from "../support/device-change";
import { sealedUnderDroppedKey } from "../support/dropped-key";
import { stackForFile, waitFor } from "../support/stack";
import { refusalsCounted } from "../support/refusals";

let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };

const stack = stackForFile({ workers: false, clock });
const { db, act, shopRow, drainInbox, pendingPayment, dedicatedDevice, sendSigned, currentSandboxCredentials } = deviceChangeSteps(stack, clock);
/** A "pending" notification of the order signed with `secretHex`, as the gateway sends it: the door's status. */
const notify = (secretHex: string, orderId: string) => sendSigned(secretHex, JSON.stringify({ identifier: orderId, status: { code: "PE", description: "Pending" } }));

const purge = () => purgeExpiredRows(stack().services, { retentionDays: DEFAULT_RETENTION_DAYS, customerDataDays: DEFAULT_CUSTOMER_DATA_RETENTION_DAYS });
const followed = async (inProgress: number, watched: number) =>
  expect(await paymentsFollowed(db(), await shopRow(), clock.now())).toEqual({ live: { inProgress: 0, watched: 0 }, sandbox: { inProgress, watched } });

/** Removes the sandbox credentials as the connection page does, confirmed for those the shop holds. */
async function removeSandbox() {
  const removed = await removeGatewayCredentials(stack().services, stack().shopDomain, "sandbox", credentialsVersion(await shopRow(), "sandbox") ?? "");
  if (!removed.ok) throw new Error(removed.message);
  return removed.shop;
}

// First in the file: the sandbox signs its notifications with the real time, and the tests below move the app's clock on.
it("a new device connected while a payment is in progress on the previous one: the previous device's notification still has it settled, from a read with its credentials, which then go", async () => {
  const { session, payment, orderId } = await pendingPayment();
  const before = await shopRow();
  const refusedBefore = await refusalsCounted(db(), { shopId: before.id });

  // The same credentials connected again replace nothing.
  const again = await connectGateway(stack().services, stack().shopDomain, { env: "sandbox", ...(await currentSandboxCredentials()) });
  expect(again).toMatchObject({ ok: true, shop: { sandboxRetiredDeviceKeyEnc: null, sandboxRetiredSecretKeyEnc: null } });
  expect(again.ok && again.notice).toBeFalsy();

  // Another device takes its place: the previous one's credentials are kept, out of use, and the merchant is told.
  const previous = await shopRow();
  const connected = await connectGateway(stack().services, stack().shopDomain, { env: "sandbox", ...(await dedicatedDevice()) });
  expect(connected).toMatchObject({
    ok: true,
    notice: "Payments in progress on the previous device will still be finished with it: its credentials are kept, out of use, until those payments no longer need them.",
    shop: { sandboxRetiredDeviceKeyEnc: previous.sandboxDeviceKeyEnc, sandboxRetiredSecretKeyEnc: previous.sandboxSecretKeyEnc },
  });
  expect((await shopRow()).sandboxDeviceKeyEnc).not.toBe(previous.sandboxDeviceKeyEnc);

  // The shopper pays the order made on the previous device, which signs the notification: it is verified and settles the payment.
  await act(orderId, { action: "pay", amount: "exact" });
  await act(orderId, { action: "confirm" });
  await waitFor(async () => (await db().gatewayWebhook.count({ where: { orderId, status: "CO" } })) > 0, "the CO webhook stored");
  expect(await refusalsCounted(db(), { shopId: before.id })).toBe(refusedBefore);
  await drainInbox();
  await deliverDueMessages(stack().services, { worker: "t" });
  expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ state: "paid", gatewayStatus: "CO", unverifiedSince: null });
  expect(stack().standin.state.session(session.id)?.state.code).toBe("RESOLVED");

  // Checked by that read, the payment needs them no more: deleted.
  await followed(0, 0);
  expect((await purge()).retiredDevices).toBe(1);

  // With no payment on it any more, the device replaced next is deleted at once.
  expect(await connectSandbox(stack().services, stack().shopDomain)).toMatchObject({ ok: true, notice: null, shop: { sandboxRetiredDeviceKeyEnc: null } });
});

it("credentials removed with a payment in progress still finish it: its notification has its order read with them, which settles it, then they are deleted", async () => {
  const { session, payment, orderId } = await pendingPayment();
  const before = await shopRow();
  const secretHex = stack().services.cipher.decrypt(before.sandboxSecretKeyEnc!, credentialContext(before.id, "sandbox", "secret-key"));

  const removed = await removeSandbox();
  expect(removed).toMatchObject({
    sandboxDeviceKeyEnc: null,
    sandboxSecretKeyEnc: null,
    sandboxRetiredDeviceKeyEnc: before.sandboxDeviceKeyEnc,
    sandboxRetiredSecretKeyEnc: before.sandboxSecretKeyEnc,
  });
  // No new payment starts on them.
  const refused = await stack().standin.state.startPayment({ test: true });
  expect(refused.delivery.status).toBeGreaterThanOrEqual(400);

  // The shopper pays: the gateway's notification is verified with the retired Secret Key, and
  // the order it names is read with the retired device key (a notification signed with a key
  // taken out of use is not taken at its word), which settles the payment.
  await act(orderId, { action: "pay", amount: "exact" });
  await act(orderId, { action: "confirm" });
  await waitFor(async () => (await db().gatewayWebhook.count({ where: { orderId, status: "CO" } })) > 0, "the CO webhook stored");
  await drainInbox();
  await deliverDueMessages(stack().services, { worker: "t" });
  expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ state: "paid", gatewayStatus: "CO" });
  expect(stack().standin.state.session(session.id)?.state.code).toBe("RESOLVED");

  // Settled from the gateway's record: no read is still owed. The connection page counts it no
  // more against the sandbox: it began on the credentials removed, and keeps those, not any
  // connected later.
  expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).unverifiedSince).toBeNull();

  // Nothing needs them any more: deleted, and a notification signed with them is refused.
  await followed(0, 0);
  expect((await purge()).retiredDevices).toBe(1);
  expect(await shopRow()).toMatchObject({ sandboxRetiredDeviceKeyEnc: null, sandboxRetiredSecretKeyEnc: null });
  expect(await notify(secretHex, orderId)).toBe(401);

  expect((await connectSandbox(stack().services, stack().shopDomain)).ok).toBe(true);
});

it("a payment whose notifications were lost is read by the reconciler with the retired credentials, and the shopper's return reads it too", async () => {
  const lost = await pendingPayment();
  const returning = await pendingPayment();
  const shop = await shopRow();
  const faults = `/sandbox/devices/${stack().services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"))}/webhook-faults`;
  await stack().sandboxControl(faults, { mode: "drop" });
  await removeSandbox();
  try {
    for (const { orderId } of [lost, returning]) {
      await act(orderId, { action: "pay", amount: "exact" });
      await act(orderId, { action: "confirm" });
    }
    // The shopper comes back from the gateway: the order is read, and the payment settled.
    const back = await fetch(stack().services.links.returnUrl(returning.payment, "ok"), { redirect: "manual" });
    expect(back.status).toBe(303);
    expect(await db().payment.findUniqueOrThrow({ where: { id: returning.payment.id } })).toMatchObject({ state: "paid", unverifiedSince: null });

    // The other's notification never came: the reconciler reads its order.
    await reconcileOnce(stack().services, { worker: "t", force: true });
    expect(await db().payment.findUniqueOrThrow({ where: { id: lost.payment.id } })).toMatchObject({ state: "paid", gatewayStatus: "CO", unverifiedSince: null });
  } finally {
    await stack().sandboxControl(faults, { mode: "deliver" });
  }
  expect((await purge()).retiredDevices).toBe(1);
  expect((await connectSandbox(stack().services, stack().shopDomain)).ok).toBe(true);
});

it("credentials removed while a rejected payment is watched for late crypto are kept: the reconciler reads its order with them and flags the crypto, and they go once the week is over", async () => {
  const { session, payment, orderId } = await pendingPayment();
  const shop = await shopRow();
  const faults = `/sandbox/devices/${stack().services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"))}/webhook-faults`;
  await stack().sandboxControl(faults, { mode: "drop" });
  try {
    // The order expires unpaid; a read rejects the payment, and Shopify is told.
    await act(orderId, { action: "expire" });
    await reconcileOnce(stack().services, { worker: "t", force: true });
    expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ state: "failed", gatewayStatus: "EX" });
    await deliverDueMessages(stack().services, { worker: "t" });
    expect(stack().standin.state.session(session.id)?.state.code).toBe("REJECTED");

    // Removed now, the credentials are kept for the week the rejected payment is watched.
    await followed(0, 1);
    expect(await removeSandbox()).toMatchObject({ sandboxDeviceKeyEnc: null, sandboxRetiredDeviceKeyEnc: shop.sandboxDeviceKeyEnc });
    expect((await purge()).retiredDevices).toBe(0);

    // The shopper's wallet pays after all: the gateway records it under EX and sends nothing.
    await act(orderId, { action: "pay", amount: "exact" });
    offsetMs += LATE_PAYMENT_RECHECK_MS + 60_000;
    expect((await reconcileOnce(stack().services, { worker: "t" })).gatewayCalls).toBeGreaterThan(0);
    expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ state: "failed", attention: "late_payment", attentionResolvedAt: null });
  } finally {
    await stack().sandboxControl(faults, { mode: "deliver" });
  }

  // A week after the payment began it is no longer watched: nothing needs them.
  offsetMs += LATE_PAYMENT_WATCH_MS;
  await followed(0, 0);
  expect((await purge()).retiredDevices).toBe(1);
  expect(await shopRow()).toMatchObject({ sandboxRetiredDeviceKeyEnc: null, sandboxRetiredSecretKeyEnc: null });
  expect((await connectSandbox(stack().services, stack().shopDomain)).ok).toBe(true);
});

it("credentials removed with no payment in progress are deleted at once", async () => {
  const removed = await removeSandbox();
  expect(removed).toMatchObject({ sandboxDeviceKeyEnc: null, sandboxRetiredDeviceKeyEnc: null, sandboxRetiredSecretKeyEnc: null });
  expect((await connectSandbox(stack().services, stack().shopDomain)).ok).toBe(true);
});

it("retired credentials are sealed again by a key rotation, like the current ones", async () => {
  await pendingPayment();
  await removeSandbox();
  const retired = await shopRow();
  const rotated = createCredentialCipher([{ id: "next", key: new Uint8Array(32).fill(7) }, ...stack().env.CREDENTIALS_ENCRYPTION_KEYS]);
  const report = await rotateCredentialEncryption(db(), rotated);
  expect(report.unreadable).toEqual([]);
  const after = await shopRow();
  expect(after.sandboxRetiredDeviceKeyEnc).not.toBe(retired.sandboxRetiredDeviceKeyEnc);
  expect(rotated.decrypt(after.sandboxRetiredSecretKeyEnc!, credentialContext(after.id, "sandbox", "secret-key"))).toBe(
    stack().services.cipher.decrypt(retired.sandboxRetiredSecretKeyEnc!, credentialContext(retired.id, "sandbox", "secret-key")),
  );
});

it("a device replaced while credentials removed before it are still kept takes their place, and the merchant is told", async () => {
  // The test above left the sandbox removed.
  expect((await connectSandbox(stack().services, stack().shopDomain)).ok).toBe(true);
  await pendingPayment();
  const first = await shopRow();
  await removeSandbox();
  // Connected where none was: nothing is replaced, and the removed credentials stay.
  const second = await connectSandbox(stack().services, stack().shopDomain);
  expect(second).toMatchObject({ ok: true, notice: null, shop: { sandboxRetiredDeviceKeyEnc: first.sandboxDeviceKeyEnc } });
  if (!second.ok) return;

  // A payment on the second device, then "Reconnect the gateway sandbox": the second device's
  // credentials are kept for it, in the place of the first's, and the merchant is told both.
  await pendingPayment();
  const third = await connectSandbox(stack().services, stack().shopDomain);
  expect(third).toMatchObject({
    ok: true,
    notice: expect.stringMatching(/^Payments in progress on the previous device will still be finished with it: .* The credentials of the device before it, kept until now for payments that may still be in progress on them, were deleted to make room/),
    shop: { sandboxRetiredDeviceKeyEnc: second.shop.sandboxDeviceKeyEnc, sandboxRetiredSecretKeyEnc: second.shop.sandboxSecretKeyEnc },
  });
});

it("credentials in use that no configured key opens, removed while payments are followed on them, are deleted: the readable ones kept from the device before stay", async () => {
  // The test above left the third device connected, with the second's credentials kept for its payment.
  const kept = await shopRow();
  expect(kept.sandboxRetiredDeviceKeyEnc).not.toBeNull();
  await pendingPayment();
  // The current pair sealed under a key the app no longer has.
  await db().shop.update({ where: { id: kept.id }, data: { sandboxDeviceKeyEnc: sealedUnderDroppedKey(kept.sandboxDeviceKeyEnc!), sandboxSecretKeyEnc: sealedUnderDroppedKey(kept.sandboxSecretKeyEnc!) } });

  const removed = await removeSandbox();
  expect(removed).toMatchObject({
    sandboxDeviceKeyEnc: null,
    sandboxSecretKeyEnc: null,
    sandboxRetiredDeviceKeyEnc: kept.sandboxRetiredDeviceKeyEnc,
    sandboxRetiredSecretKeyEnc: kept.sandboxRetiredSecretKeyEnc,
    sandboxRetiredAt: kept.sandboxRetiredAt,
  });
});
