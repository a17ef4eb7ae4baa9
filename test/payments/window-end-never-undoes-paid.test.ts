// The reconciler rejects a payment still open near the end of Shopify's pending
// window only while it is still open when written. A settlement that lands between the
// reconciler's read and its write (a signed webhook settling the payment paid) wins: the paid
// payment is not turned to failed, not flagged pending_window_expired, and its one final call
// stays the resolve.
import { beforeAll, expect, it } from "vitest";
import type { PaymentsDeps } from "../../app/payments/deps";
import { enqueue, finalMessageKey } from "../../app/payments/outbox";
import { reconcileOnce } from "../../app/payments/reconcile";
import { movingClock, stackForFile } from "../support/stack";

const time = movingClock(() => stack());
const stack = stackForFile({ workers: false, clock: time.clock, gatewayLimits: "spec", gatewayRetry: { baseDelayMs: 5, maxDelayMs: 20 } });
const db = () => stack().services.db;
beforeAll(() => stack().logger.info("the pending window's end never undoes a paid payment: started"));

it("a payment settled paid while the reconciler was finalising it at the end of the pending window stays paid, with its resolve", async () => {
  const { session } = await stack().standin.state.startPayment({ test: true });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "choose_currency", currency: "BTC" });
  await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "pay", amount: "exact" });
  time.advanceAppOnly(71 * 3_600_000);

  // The payment's signed CO webhook is settled by another instance just before the reconciler writes.
  let raced = false;
  const settleMeanwhile = async () => {
    if (raced) return;
    const row = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
    if (row.state === "paid" || row.state === "failed") return;
    raced = true;
    const now = time.clock.now();
    await db().$transaction(async (tx) => {
      await tx.payment.update({ where: { id: payment.id }, data: { state: "paid", gatewayStatus: "CO", unverifiedSince: now, updatedAt: now } });
      await enqueue(tx, { shopDomain: stack().shopDomain, paymentId: payment.id, dedupeKey: finalMessageKey(payment.id), payload: { kind: "payment.resolve", gid: payment.gid }, now });
    });
  };
  const realDb = db();
  const racingDb = new Proxy(realDb, {
    get(target, prop) {
      if (prop === "$transaction") {
        return async (...args: unknown[]) => {
          await settleMeanwhile();
          return (target.$transaction as (...a: unknown[]) => unknown)(...args);
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const services = { ...stack().services, db: racingDb } as unknown as PaymentsDeps;

  const summary = await reconcileOnce(services as never, { worker: "t" });
  expect(raced, "the reconciler never came to finalise the payment").toBe(true);
  expect(summary.finalised).toBe(0);
  const after = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(after.state, "the end of the pending window turned a paid payment to failed").toBe("paid");
  expect(after.attention).not.toBe("pending_window_expired");
  const messages = await db().outboxMessage.findMany({ where: { paymentId: payment.id, kind: { in: ["payment.resolve", "payment.reject"] } } });
  expect(messages.map((m) => m.kind)).toEqual(["payment.resolve"]);
  const events = await db().paymentEvent.findMany({ where: { paymentId: payment.id, type: "state" } });
  expect(events.map((e) => JSON.parse(e.detail) as { to: string }).filter((d) => d.to === "failed")).toHaveLength(0);
});
