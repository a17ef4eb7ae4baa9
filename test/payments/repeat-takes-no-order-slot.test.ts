// A payment session Shopify delivers again is answered from what is stored, and spends none of
// the device's order creations: the gateway lets a device create 15 orders a minute and 200 a
// day (SPEC.md), and the slot a repeat took beside its insert (which then found the session
// recorded) is given back, so retries of an answered session cannot turn the next shopper away.
import { expect, it } from "vitest";
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
  expect.soft(await orderSlots(), "order-creation slots taken by repeats that sent nothing").toBe(slotsAfterFirst);

  // Another shopper, in the same minute: one order created so far, well within 15 a minute.
  const next = await stack().standin.state.startPayment({ test: true });
  expect(next.delivery.status, next.delivery.body).toBe(200);
}, 60_000);
