// A shopper sent back through the gateway's "ko" link (gave up, or a tab opened before the
// order moved on) while the payment still waits for the crypto, and the order this return
// reads shows neither "waiting" nor "never started": a status no one can interpret, the kind
// of order the app keeps open and flags for the merchant. Such an order may hold the shopper's
// money, so the shopper is told the shop was notified instead of being sent to choose another
// payment method (and perhaps pay twice). A plain "waiting for payment" order still sends them
// back to choose. Through the real stack, with the gateway's answers rewritten.
import { expect, it } from "vitest";
import { handleShopperReturn } from "../../app/payments/handle-return";
import { createServices } from "../../app/services.server";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });

/** The app's services with the gateway's orders shown in `status` wherever they read PE or NR. */
function servicesSeeing(status: string) {
  const base = stack().services;
  const rewriting: typeof fetch = async (input, init) => {
    const answer = await fetch(input, init);
    if ((init?.method ?? "GET") !== "GET" || !answer.ok) return answer;
    const text = (await answer.text()).replace(/"status"\s*:\s*"(?:PE|NR)"/g, `"status": "${status}"`);
    return new Response(text, { status: answer.status, headers: answer.headers });
  };
  return createServices(base.env, { db: base.db, sql: base.sql, logger: stack().logger, fetch: rewriting });
}

async function awaitingPayment() {
  const { session, delivery } = await stack().standin.state.startPayment({ test: true });
  expect(delivery.status).toBe(200);
  const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  expect(payment).toMatchObject({ state: "awaiting_payment" });
  const signature = new URL(stack().services.links.returnUrl(payment, "ko")).searchParams.get("sig")!;
  return { payment, signature };
}

it("an order this return reads in a status no one can interpret: the shopper is told the shop was notified, not sent to choose again", async () => {
  const { payment, signature } = await awaitingPayment();
  const answer = await handleShopperReturn(servicesSeeing("RF"), { paymentId: payment.id, signature, outcome: "ko" });
  expect(answer.kind).toBe("shop_notified");
  const after = await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(after).toMatchObject({ state: "awaiting_payment", gatewayStatus: "RF", attention: "unknown_status" });
  expect(await stack().services.db.paymentEvent.count({ where: { paymentId: payment.id, type: "shopper_abandoned" } })).toBe(0);
});

it("an order this return reads still waiting for payment: the shopper goes back to choose another way to pay", async () => {
  const { payment, signature } = await awaitingPayment();
  const answer = await handleShopperReturn(stack().services, { paymentId: payment.id, signature, outcome: "ko" });
  expect(answer).toEqual({ kind: "redirect", url: payment.cancelUrl });
  expect(await stack().services.db.paymentEvent.count({ where: { paymentId: payment.id, type: "shopper_abandoned" } })).toBe(1);
});
