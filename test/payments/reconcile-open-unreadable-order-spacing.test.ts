// An open payment whose order the gateway returns in a shape the app cannot read counts as
// checked by the read that met it, as a readable order does: it is read again when next due
// (every 6 hours after its first day), not at every pass. Otherwise it kept its shop due, so
// the reconciler read the shop's orders every hour until the payment was finalised at 70
// hours, spending the device's quota on reads that meet the same answer.
// Real stack: the gateway sandbox over HTTP and SQLite; only that order's entries are altered
// on their way back, as a gateway's odd record of one order would be.
import { expect, it } from "vitest";
import { LIST_SPACING_MS, reconcileOnce } from "../../app/payments/reconcile";
import { createServices } from "../../app/services.server";
import { movingClock, setWebhookFaults, stackForFile } from "../support/stack";

const HOUR_MS = 3_600_000;
const time = movingClock(() => stack());
const stack = stackForFile({ workers: false, clock: time.clock, gatewayRetry: { baseDelayMs: 5, maxDelayMs: 20 } });
const db = () => stack().services.db;

it("an open payment whose order cannot be read is read again when next due, not every hour", async () => {
  await setWebhookFaults(stack(), "drop");
  const { session } = await stack().standin.state.startPayment({ test: true });
  const odd = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  await stack().sandboxControl(`/sandbox/orders/${odd.gatewayOrderId}/actions`, { action: "choose_currency", currency: "BTC" });

  // Every answer that holds the order holds it with an amount the schema refuses.
  const reads: string[] = [];
  const oddly: typeof fetch = async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const response = await fetch(input, init);
    if (!url.includes("/orders/") || response.status !== 200) return response;
    reads.push(url);
    const body = (await response.json()) as unknown;
    const alter = (order: Record<string, unknown>) => (order.identifier === odd.gatewayOrderId ? { ...order, fiat_amount: "not a number" } : order);
    const altered = Array.isArray(body) ? body.map((order) => alter(order as Record<string, unknown>)) : body;
    return new Response(JSON.stringify(altered), { status: 200, headers: { "content-type": "application/json" } });
  };
  const services = createServices(stack().env, { db: stack().services.db, sql: stack().services.sql, clock: time.clock, logger: stack().logger, fetch: oddly, gatewayRetry: { baseDelayMs: 5, maxDelayMs: 20 } });

  // A day and more in, then twelve passes an hour apart.
  await time.advance(26 * HOUR_MS);
  for (let pass = 0; pass < 12; pass++) {
    if (pass > 0) await time.advance(LIST_SPACING_MS);
    await reconcileOnce(services, { worker: "reconciler" });
  }
  // Passes at 26 to 37 hours: read (looked up, or listed) at 26, then at 32 as it is due; two
  // reads, not twelve.
  expect(reads).toHaveLength(2);
  const payment = await db().payment.findUniqueOrThrow({ where: { id: odd.id } });
  expect(payment.state).toBe("awaiting_payment");
  expect(payment.lastCheckedAt).not.toBeNull();
}, 120_000);
