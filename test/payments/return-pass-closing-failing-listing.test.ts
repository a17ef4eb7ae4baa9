// When GET /orders/ fails (orders/info still answers), the reconciler reads closing payments'
// orders one by one and resolves the paid ones. Returns made meanwhile read their own order
// and leave the reconciler's schedule as it was, so a paid payment at the end of the window is
// read and resolved, never rejected unread.
import { expect, it } from "vitest";
import { FINALISE_AFTER_MS, FINALISE_UNREAD_AFTER_MS } from "../../app/payments/reconcile";
import { movingClock, PAID_IN_FULL, paymentThrough, setWebhookFaults, shoppersKeepReturning, stackForFile } from "../support/stack";

const time = movingClock(() => stack());
const stack = stackForFile({ workers: false, clock: time.clock, gatewayRetry: { baseDelayMs: 5, maxDelayMs: 20 } });

it("a paid payment at the end of the window is read by its identifier, not rejected unread, while the listing fails and shoppers return", async () => {
  await setWebhookFaults(stack(), "drop");
  const paid = await paymentThrough(stack(), PAID_IN_FULL);
  await time.advance(FINALISE_AFTER_MS + 30_000);
  await stack().sandboxControl("/sandbox/faults", { endpoint: "orders.list", kind: "http_500", count: 10_000 });
  try {
    await shoppersKeepReturning(stack(), time, FINALISE_UNREAD_AFTER_MS + 5 * 60_000);
  } finally {
    await stack().sandboxControl("/sandbox/faults", undefined, "DELETE");
  }
  const row = await stack().services.db.payment.findUniqueOrThrow({ where: { id: paid.payment.id } });
  expect(row).toMatchObject({ state: "paid", gatewayStatus: "CO" });
}, 180_000);
