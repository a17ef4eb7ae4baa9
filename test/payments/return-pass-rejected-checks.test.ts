// Returns' reads of the shop's orders leave watched rejected payments out of their dates, and
// so do not stand in for the reconciler's listing while one of them is due its check for late
// crypto: crypto sent after an order expired is found within the hour although shoppers keep
// returning.
import { expect, it } from "vitest";
import { LATE_PAYMENT_RECHECK_MS, LIST_SPACING_MS, reconcileOnce } from "../../app/payments/reconcile";
import { movingClock, PAID_IN_FULL, paymentThrough, setWebhookFaults, stackForFile } from "../support/stack";

const time = movingClock(() => stack());
const stack = stackForFile({ workers: false, clock: time.clock, gatewayRetry: { baseDelayMs: 5, maxDelayMs: 20 } });
const db = () => stack().services.db;
const act = (orderId: string, body: Record<string, string>) => stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, body);
const advance = (ms: number) => time.advance(ms);

it("a rejected payment due its late-crypto check is checked within the hour although shoppers keep returning", async () => {
  await setWebhookFaults(stack(), "drop");
  // An order expires unpaid, its EX webhook lost: the reconciler's listing rejects the payment.
  const rejected = await paymentThrough(stack(), [{ action: "choose_currency", currency: "BTC" }]);
  await act(rejected.orderId, { action: "expire" });
  await advance(LIST_SPACING_MS);
  await reconcileOnce(stack().services, { worker: "t" });
  expect(await db().payment.findUniqueOrThrow({ where: { id: rejected.payment.id } })).toMatchObject({ state: "failed", gatewayStatus: "EX" });
  // The shopper's wallet pays after all: the gateway records it under EX and sends nothing.
  await act(rejected.orderId, { action: "pay", amount: "exact" });
  await advance(LATE_PAYMENT_RECHECK_MS);

  // From now on a shopper whose webhooks were lost returns every 50 minutes, and the reconciler
  // runs between the returns, as its 60 s interval would.
  for (let i = 0; i < 4; i++) {
    const shopper = await paymentThrough(stack(), PAID_IN_FULL);
    const back = await fetch(stack().services.links.returnUrl(shopper.payment, "ok"), { redirect: "manual" });
    await back.text();
    expect((await db().payment.findUniqueOrThrow({ where: { id: shopper.payment.id } })).state).toBe("paid");
    await advance(60_000);
    await reconcileOnce(stack().services, { worker: "t" });
    await advance(49 * 60_000);
    await reconcileOnce(stack().services, { worker: "t" });
  }
  const row = await db().payment.findUniqueOrThrow({ where: { id: rejected.payment.id } });
  expect(row.attention).toBe("late_payment");
  expect(time.clock.now().getTime() - (row.lastCheckedAt ?? row.createdAt).getTime()).toBeLessThan(LATE_PAYMENT_RECHECK_MS);
}, 120_000);
