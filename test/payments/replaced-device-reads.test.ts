// A merchant replaces the gateway device while payments on it are in progress, by a device
// that cannot see its orders: "Reconnect the gateway sandbox" signs up a new sandbox merchant,
// and the sandbox, like the gateway, shows an order only to the devices of the merchant that
// made it. The previous device's credentials are kept for those payments, and every read of
// their orders goes through them when the current device's gateway answers that it has no such
// order: the reconciler (whose pass then lists the previous device's orders too), a manual
// check and the shopper's return. A gateway that fails is asked again later, never through
// the previous device.
import { expect, it } from "vitest";
import { hashDeviceKey } from "../../app/gateway/quota";
import { checkPaymentNow, SHOPPER_WAITING_READ } from "../../app/payments/check-payment";
import { deliverDueMessages } from "../../app/payments/outbox";
import { FINALISE_AFTER_MS, reconcileOnce } from "../../app/payments/reconcile";
import { connectSandbox } from "../../app/shops/onboarding.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { deviceChangeSteps } from "../support/device-change";
import { stackForFile, waitFor } from "../support/stack";

let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };

// One test fails the gateway on purpose: the client's retries are kept, with short waits.
const stack = stackForFile({ workers: false, clock, gatewayRetry: { baseDelayMs: 5, maxDelayMs: 20 } });
const { db, shopRow, pendingPayment, shopperPays } = deviceChangeSteps(stack, clock);


/** The sandbox device keys the shop holds, opened. */
async function deviceKeys() {
  const shop = await shopRow();
  const open = (sealed: string | null) => (sealed === null ? null : stack().services.cipher.decrypt(sealed, credentialContext(shop.id, "sandbox", "device-key")));
  return { current: open(shop.sandboxDeviceKeyEnc)!, retired: open(shop.sandboxRetiredDeviceKeyEnc) };
}

/** Gateway calls the app counted on a device key since `since` (the quota store forgets those over a day old). */
const callsOn = (deviceKey: string, since: Date) => db().gatewayCall.count({ where: { deviceHash: hashDeviceKey(deviceKey), at: { gte: since } } });

/** "Reconnect the gateway sandbox" while payments on the current device are in progress: its credentials are kept, out of use. */
async function reconnectSandbox(): Promise<{ previous: string; current: string }> {
  const previous = (await deviceKeys()).current;
  const connected = await connectSandbox(stack().services, stack().shopDomain);
  expect(connected).toMatchObject({ ok: true, notice: expect.stringMatching(/^Payments in progress on the previous device will still be finished with it/) });
  const keys = await deviceKeys();
  expect(keys.retired).toBe(previous);
  return { previous, current: keys.current };
}

it("after the sandbox is reconnected, the reconciler alone reads the previous device's paid orders at the end of the pending window and resolves them, listing that device once", async () => {
  const first = await pendingPayment();
  const second = await pendingPayment();
  const oldDevice = (await deviceKeys()).current;
  // Their notifications are lost: only a read can tell the app the shopper paid.
  const faults = `/sandbox/devices/${oldDevice}/webhook-faults`;
  await stack().sandboxControl(faults, { mode: "drop" });
  try {
    const { previous, current } = await reconnectSandbox();
    for (const { orderId } of [first, second]) await shopperPays(orderId);
    // The new merchant's device does not know them.
    const unknown = await fetch(`${stack().sandbox.baseUrl}/orders/info/${first.orderId}`, { headers: { "X-Device-Id": current } });
    expect(unknown.status).toBe(404);
    await unknown.body?.cancel();

    offsetMs += FINALISE_AFTER_MS + 60_000;
    const since = clock.now();
    const summary = await reconcileOnce(stack().services, { worker: "t" });
    for (const { payment } of [first, second]) {
      expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ state: "paid", gatewayStatus: "CO", attention: null });
    }
    expect(summary).toMatchObject({ settled: 2, finalised: 0 });
    // The new device's listing and the first look-up, which it answered 404; then, through the
    // previous device, that order and the previous device's listing, which holds the second.
    // Each call counted on its own device's key.
    expect(summary.gatewayCalls).toBe(4);
    expect({ previous: await callsOn(previous, since), current: await callsOn(current, since) }).toEqual({ previous: 2, current: 2 });
  } finally {
    await stack().sandboxControl(faults, { mode: "deliver" });
  }
  await waitFor(async () => {
    await deliverDueMessages(stack().services, { worker: "t" });
    return [first, second].every(({ session }) => stack().standin.state.session(session.id)?.state.code === "RESOLVED");
  }, "both resolves delivered");
});

it("after the sandbox is reconnected, a manual check and the shopper's return read the previous device's orders", async () => {
  const checked = await pendingPayment();
  const returning = await pendingPayment();
  const { previous } = await reconnectSandbox();
  for (const { orderId } of [checked, returning]) await shopperPays(orderId);

  const since = clock.now();
  expect(await checkPaymentNow(stack().services, (await shopRow()).id, checked.payment.id)).toMatchObject({ ok: true, state: "paid", gatewayStatus: "CO" });
  const back = await fetch(stack().services.links.returnUrl(returning.payment, "ok"), { redirect: "manual" });
  await back.body?.cancel();
  expect(back.status).toBe(303);
  expect(await db().payment.findUniqueOrThrow({ where: { id: returning.payment.id } })).toMatchObject({ state: "paid", gatewayStatus: "CO" });
  expect(await callsOn(previous, since)).toBe(2);
});

it("an order the current device's gateway fails to read (a 500, a 429) is not read through the previous device: it is read again later", async () => {
  const { payment, orderId } = await pendingPayment();
  const { previous, current } = await reconnectSandbox();
  await shopperPays(orderId);
  const shopId = (await shopRow()).id;

  for (const [kind, budget] of [
    ["http_500", undefined],
    // The gateway's Retry-After is a second: one attempt is enough to see where it goes.
    ["http_429", SHOPPER_WAITING_READ],
  ] as const) {
    await stack().sandboxControl("/sandbox/faults", { endpoint: "orders.info", kind, count: 100 });
    try {
      const since = clock.now();
      expect(await checkPaymentNow(stack().services, shopId, payment.id, budget ? { budget } : {}), kind).toMatchObject({ ok: false, reason: "gateway_error" });
      expect(await callsOn(current, since), kind).toBeGreaterThan(0);
      expect(await callsOn(previous, since), kind).toBe(0);
    } finally {
      await stack().sandboxControl("/sandbox/faults", undefined, "DELETE");
    }
  }
  expect(await checkPaymentNow(stack().services, shopId, payment.id)).toMatchObject({ ok: true, state: "paid", gatewayStatus: "CO" });
});
