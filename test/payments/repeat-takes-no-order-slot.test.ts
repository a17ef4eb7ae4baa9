// A payment session Shopify delivers again is answered from what is stored, and spends none of
// the device's order creations: the gateway lets a device create 15 orders a minute and 200 a
// day (SPEC.md), and the slot a repeat took beside its insert (which then found the session
// recorded) is given back, so retries of an answered session cannot turn the next shopper away.
import { expect, it, vi } from "vitest";
import { stackForFile } from "../support/stack";

// SPEC.md's throttles on both sides (15 order creations a minute on the device).
const stack = stackForFile({ gatewayLimits: "spec" });
const db = () => stack().services.db;
const orderSlots = () => db().gatewayCall.count({ where: { class: "critical" } });

it("repeats of an answered session take none of the device's order creations, and the next shopper's checkout is taken", async () => {
  const { session, delivery } = await stack().standin.state.startPayment({ test: true });
  expect(delivery.status, delivery.body).toBe(200);
  const slotsAfterFirst = await orderSlots();

  // Shopify delivers the same session again (its retries): each gets exactly the first answer.
  for (let i = 0; i < 14; i++) {
    const again = await stack().standin.state.redeliverPayment(session.id);
    expect(again.delivery.status).toBe(200);
    expect(again.delivery.body).toBe(delivery.body);
  }
  // Nothing was sent to the gateway for them, and nothing of its quota spent.
  expect(await db().payment.count({ where: { shopifyPaymentId: session.id } })).toBe(1);
  // (Each repeat gives back its slot as it comes: it was answered without waiting for it.)
  await vi.waitFor(async () => expect(await orderSlots(), "order-creation slots taken by repeats that sent nothing").toBe(slotsAfterFirst));

  // Another shopper, in the same minute: one order created so far, well within 15 a minute.
  const next = await stack().standin.state.startPayment({ test: true });
  expect(next.delivery.status, next.delivery.body).toBe(200);
}, 60_000);

it("a repeat is answered at once while the device's minute of order creations is full, not after waiting for a slot it would give back", async () => {
  const { session, delivery } = await stack().standin.state.startPayment({ test: true });
  expect(delivery.status, delivery.body).toBe(200);
  // The device's 15 creations of this minute are all taken (a busy sale), the oldest 52 s ago:
  // a new order's slot comes in 8 s, and is waited for (up to 10 s).
  const taken = await db().gatewayCall.findFirstOrThrow({ where: { class: "critical" }, orderBy: { at: "desc" } });
  const inMinute = await db().gatewayCall.count({ where: { class: "critical", deviceHash: taken.deviceHash, at: { gt: new Date(Date.now() - 60_000) } } });
  await db().gatewayCall.createMany({ data: Array.from({ length: Math.max(0, 15 - inMinute) }, () => ({ deviceHash: taken.deviceHash, class: "critical", at: new Date(Date.now() - 52_000) })) });

  // Shopify delivers the session again: the answer does not wait for the slot (5 s is well
  // short of the slot's 8, and far more than an answer from what is stored takes).
  const again = stack().standin.state.redeliverPayment(session.id);
  const first = await Promise.race([again.then(() => "answered"), new Promise((resolve) => setTimeout(() => resolve("still waiting"), 5_000))]);
  expect(first).toBe("answered");
  expect((await again).delivery.body).toBe(delivery.body);
}, 60_000);
