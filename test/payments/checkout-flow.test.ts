// Checkout payments end to end: the real app server and routes, a real SQLite database,
// the gateway sandbox over HTTP and the Shopify stand-in validating every operation
// against the Payments Apps schema.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, waitFor, type Stack } from "../support/stack";

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

async function startPayment(overrides: Record<string, unknown> = {}) {
  const { session, delivery } = await stack.standin.state.startPayment({ test: true, ...overrides });
  expect(delivery.status, delivery.body).toBe(200);
  const payment = await stack.services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  return { session, delivery, payment };
}

async function orderAction(gatewayOrderId: string, body: Record<string, unknown>) {
  return stack.sandboxControl(`/sandbox/orders/${gatewayOrderId}/actions`, body);
}

function shopifyState(sessionId: string) {
  return stack.standin.state.session(sessionId)?.state.code;
}

function mutationsFor(sessionId: string) {
  return stack.standin.state.operationsFor(sessionId).map((op) => op.operationName);
}

describe("a paid payment", () => {
  it("creates one gateway order, settles CO by webhook, resolves once and returns the shopper to Shopify", async () => {
    const { session, delivery, payment } = await startPayment();
    expect(delivery.redirectUrl).toMatch(new RegExp(`^${stack.sandbox.origin}/pay/`));
    expect(payment.gatewayOrderId).toBeTruthy();
    const orderId = payment.gatewayOrderId!;

    await orderAction(orderId, { action: "choose_currency", currency: "BTC" });
    await orderAction(orderId, { action: "pay", amount: "exact" });
    await orderAction(orderId, { action: "confirm" });

    await waitFor(async () => shopifyState(session.id) === "RESOLVED", "Shopify resolve");
    const settled = await stack.services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(settled.state).toBe("paid");
    expect(settled.gatewayStatus).toBe("CO");

    const back = await fetch(`${stack.app.url}/payments/return/${payment.id}/ok?sig=${new URL(stack.services.links.returnUrl(payment, "ok")).searchParams.get("sig")}`, { redirect: "manual" });
    expect(back.status).toBe(303);
    expect(back.headers.get("location")).toBe(settled.nextActionUrl);
    expect(mutationsFor(session.id).filter((name) => name === "PaymentSessionResolve")).toHaveLength(1);
    expect(stack.standin.state.invalidOperations()).toEqual([]);
  });
});
