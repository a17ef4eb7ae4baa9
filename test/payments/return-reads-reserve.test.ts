// A shopper's return reads the order from the gateway: the payment's first return always
// (one read for one order made), every later one (the waiting page reloading, a link opened
// again and again) only while the device's quota keeps its reserve for new orders, as the
// payment page's reads do. Otherwise a few open payments' return links, reloaded every 10 s,
// would spend the device's minute and day, and the shop's next shoppers could not pay.
import { expect, it } from "vitest";
import { handleShopperReturn, RETURN_READ_SPACING_MS } from "../../app/payments/handle-return";
import { QUOTA_RESERVE } from "../../app/payments/reconcile";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, gatewayLimits: "spec" });
const db = () => stack().services.db;

async function callsBy(work: () => Promise<unknown>): Promise<number> {
  const before = await db().gatewayCall.count();
  await work();
  return (await db().gatewayCall.count()) - before;
}

it("a return after the first reads the order only while the quota keeps the reserve for new orders", async () => {
  const { session } = await stack().standin.state.startPayment({ test: true });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  const signature = new URL(stack().services.links.returnUrl(payment, "ok")).searchParams.get("sig")!;
  const back = () => handleShopperReturn(stack().services, { paymentId: payment.id, signature, outcome: "ok" });
  const spacingOver = () => db().payment.update({ where: { id: payment.id }, data: { returnReadAt: new Date(Date.now() - RETURN_READ_SPACING_MS - 1_000) } });

  expect(await callsBy(back)).toBe(1);
  const deviceHash = (await db().gatewayCall.findFirstOrThrow()).deviceHash;

  // The minute's budget spent down to one call less than the reserve: a return reads nothing,
  // and the shopper is still answered from what is stored.
  const at = new Date();
  const inWindow = await db().gatewayCall.count({ where: { deviceHash, at: { gt: new Date(at.getTime() - 60_000) } } });
  await db().gatewayCall.createMany({ data: Array.from({ length: 60 - (QUOTA_RESERVE.minute - 1) - inWindow }, () => ({ deviceHash, class: "general", at })) });
  await spacingOver();
  let answer: unknown;
  expect(await callsBy(async () => (answer = await back()))).toBe(0);
  expect(answer).toMatchObject({ kind: expect.stringMatching(/^(redirect|wait)$/) });

  // The minute over, the next return reads again.
  await db().gatewayCall.updateMany({ where: { deviceHash }, data: { at: new Date(at.getTime() - 61_000) } });
  await spacingOver();
  expect(await callsBy(back)).toBe(1);
});
