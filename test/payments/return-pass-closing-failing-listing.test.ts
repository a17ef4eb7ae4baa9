// When GET /orders/ fails (orders/info still answers), the reconciler reads closing payments'
// orders one by one and resolves the paid ones. Returns made meanwhile read their own order
// and leave the reconciler's schedule as it was, so a paid payment at the end of the window is
// read and resolved, never rejected unread.
import { expect, it } from "vitest";
import { FINALISE_AFTER_MS, FINALISE_UNREAD_AFTER_MS, reconcileOnce } from "../../app/payments/reconcile";
import { PAID_IN_FULL, paymentThrough, setWebhookFaults, stackForFile } from "../support/stack";

let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };
const stack = stackForFile({ workers: false, clock, gatewayRetry: { baseDelayMs: 5, maxDelayMs: 20 } });
const db = () => stack().services.db;

async function advance(ms: number): Promise<void> {
  offsetMs += ms;
  const clockNow = (await stack().sandboxControl("/sandbox/clock", undefined, "GET")) as { offset_seconds: number };
  const behind = offsetMs / 1000 - clockNow.offset_seconds;
  if (behind > 0) await stack().sandboxControl("/sandbox/clock", { advance_seconds: behind });
}

it("a paid payment at the end of the window is read by its identifier, not rejected unread, while the listing fails and shoppers return", async () => {
  await setWebhookFaults(stack(), "drop");
  const paid = await paymentThrough(stack(), PAID_IN_FULL);
  await advance(FINALISE_AFTER_MS + 30_000);
  await stack().sandboxControl("/sandbox/faults", { endpoint: "orders.list", kind: "http_500", count: 10_000 });
  const summaries: unknown[] = [];
  try {
    while (offsetMs < FINALISE_UNREAD_AFTER_MS + 5 * 60_000) {
      const shopper = await paymentThrough(stack(), PAID_IN_FULL);
      const back = await fetch(stack().services.links.returnUrl(shopper.payment, "ok"), { redirect: "manual" });
      await back.text();
      await advance(4 * 60_000);
      const { gatewayCalls, finalised } = await reconcileOnce(stack().services, { worker: "t" });
      summaries.push({ gatewayCalls, finalised });
      await advance(4 * 60_000);
    }
  } finally {
    await stack().sandboxControl("/sandbox/faults", undefined, "DELETE");
  }
  const row = await db().payment.findUniqueOrThrow({ where: { id: paid.payment.id } });
  expect(row).toMatchObject({ state: "paid", gatewayStatus: "CO" });
}, 180_000);
