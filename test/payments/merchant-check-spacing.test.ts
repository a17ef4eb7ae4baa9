// The merchant's Check now is spaced: a payment's order is read from the gateway at most once
// every MERCHANT_CHECK_SPACING_MS, whoever read it last (another press, another tab or
// instance, the shopper's page), since each read is a call out of the device's quota that new
// orders share. A press within the spacing says so and reads nothing.
import { expect, it } from "vitest";
import { MERCHANT_CHECK_SPACING_MS } from "../../app/payments/check-payment";
import { postAdminForm } from "../support/admin-pages";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });

const gatewayCalls = () => stack().services.db.gatewayCall.count();
const press = (paymentId: string) => postAdminForm(stack(), `/app/payments/${paymentId}`, { intent: "check" });
/** The payment's last read, answered and begun, `ms` ago. */
const lastReadAgo = (paymentId: string, ms: number) => {
  const at = new Date(Date.now() - ms);
  return stack().services.db.payment.update({ where: { id: paymentId }, data: { lastCheckedAt: at, readClaimedAt: at } });
};

/** A payment with its gateway order, last read a minute ago. */
async function paymentReadAMinuteAgo() {
  const { session } = await stack().standin.state.startPayment({ test: true });
  const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  await lastReadAgo(payment.id, 60_000);
  return payment;
}

it("a press reads the order; another within the spacing reads nothing and says so; one after it reads again", async () => {
  const payment = await paymentReadAMinuteAgo();

  let calls = await gatewayCalls();
  const first = await press(payment.id);
  expect(first.status).toBe(200);
  expect(first.text).toContain("Checked with the gateway just now.");
  expect(await gatewayCalls()).toBe(calls + 1);

  calls = await gatewayCalls();
  const again = await press(payment.id);
  expect(again.status).toBe(200);
  expect(again.text).toContain(`The gateway was read for this payment in the last ${MERCHANT_CHECK_SPACING_MS / 1_000} seconds, so it was not read again`);
  expect(again.text).not.toContain("Checked with the gateway just now.");
  expect(await gatewayCalls()).toBe(calls);

  await lastReadAgo(payment.id, MERCHANT_CHECK_SPACING_MS + 1_000);
  expect((await press(payment.id)).text).toContain("Checked with the gateway just now.");
  expect(await gatewayCalls()).toBe(calls + 1);
});

it("presses at once (several tabs, several staff) read the order once", async () => {
  const payment = await paymentReadAMinuteAgo();

  const calls = await gatewayCalls();
  const answers = await Promise.all(Array.from({ length: 6 }, () => press(payment.id)));
  expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(200));
  expect(answers.filter((answer) => answer.text.includes("Checked with the gateway just now."))).toHaveLength(1);
  expect(await gatewayCalls()).toBe(calls + 1);
});
