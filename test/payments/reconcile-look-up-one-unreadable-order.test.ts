// Orders the listing leaves out (made through the merchant's earlier
// device) are looked up one by one, a few per pass. One of them whose GET /orders/info answer
// the app cannot read (an order in a shape the schema refuses) must not hold back the look-ups
// of the shop's other left-out orders pass after pass: those shoppers paid, their webhooks were
// lost, and without a read their payments are rejected unread at the end of Shopify's window.
// Real stack: the gateway sandbox over HTTP, the Shopify stand-in, SQLite; only the one order's
// info answer is altered on its way back, as a gateway's odd record of one order would be.
import { expect, it } from "vitest";
import { reconcileOnce, LIST_SPACING_MS } from "../../app/payments/reconcile";
import { createServices } from "../../app/services.server";
import { connectAnotherSandboxDevice, movingClock, setWebhookFaults, stackForFile } from "../support/stack";

const time = movingClock(() => stack());
const stack = stackForFile({ workers: false, clock: time.clock, gatewayRetry: { baseDelayMs: 5, maxDelayMs: 20 } });
const db = () => stack().services.db;
const act = (orderId: string, body: Record<string, string>) => stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, body);

async function openPayment() {
  const { session } = await stack().standin.state.startPayment({ test: true });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  await act(payment.gatewayOrderId!, { action: "choose_currency", currency: "BTC" });
  return payment;
}

it("one left-out order whose info answer cannot be read does not keep the shop's other left-out orders from being read", async () => {
  await setWebhookFaults(stack(), "drop");
  // The oldest: its order's info answer is unreadable.
  const odd = await openPayment();
  const paid = [await openPayment(), await openPayment(), await openPayment()];
  for (const p of paid) {
    await act(p.gatewayOrderId!, { action: "pay", amount: "exact" });
    await act(p.gatewayOrderId!, { action: "confirm" });
  }
  // The merchant connects another device: these orders are in no listing of the current one.
  await connectAnotherSandboxDevice(stack());

  const unreadable: typeof fetch = async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const response = await fetch(input, init);
    if (!url.includes(`/orders/info/${odd.gatewayOrderId}`) || response.status !== 200) return response;
    const [order] = (await response.json()) as Record<string, unknown>[];
    return new Response(JSON.stringify([{ ...order, fiat_amount: "not a number" }]), { status: 200, headers: { "content-type": "application/json" } });
  };
  const services = createServices(stack().env, { db: stack().services.db, sql: stack().services.sql, clock: time.clock, logger: stack().logger, fetch: unreadable, gatewayRetry: { baseDelayMs: 5, maxDelayMs: 20 } });

  // Half a day of passes, an hour apart: plenty of look-ups (five a pass) for three orders.
  for (let hour = 0; hour < 12; hour++) {
    await time.advance(hour === 0 ? 16 * 60_000 : LIST_SPACING_MS);
    await reconcileOnce(services, { worker: "reconciler" });
  }
  const states = await Promise.all(paid.map(async (p) => (await db().payment.findUniqueOrThrow({ where: { id: p.id } })).state));
  expect(states).toEqual(["paid", "paid", "paid"]);
  // The odd one is still open, to be read again (or finalised and flagged at the window's end).
  expect((await db().payment.findUniqueOrThrow({ where: { id: odd.id } })).state).toBe("awaiting_payment");
}, 120_000);
