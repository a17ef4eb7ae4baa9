// While GET /orders/ fails for the shopper's short budget (a 500 every time here; in
// production a listing slower than 3 s does the same) and GET /orders/info answers, a paid
// shopper whose webhooks were lost is not kept on the waiting page: the return reads the
// order by itself after the failed listing, and the reconciler's schedule is left as it was.
import { expect, it } from "vitest";
import { reconcileOnce } from "../../app/payments/reconcile";
import { PAID_IN_FULL, paymentThrough, setWebhookFaults, stackForFile } from "../support/stack";

let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };
const stack = stackForFile({ workers: false, clock, gatewayRetry: { baseDelayMs: 5, maxDelayMs: 20 } });
const db = () => stack().services.db;

it("a paid shopper reloading the waiting page is resolved within the hour while only the listing fails", async () => {
  await setWebhookFaults(stack(), "drop");
  const other = await paymentThrough(stack(), PAID_IN_FULL);
  const shopper = await paymentThrough(stack(), PAID_IN_FULL);
  await stack().sandboxControl("/sandbox/faults", { endpoint: "orders.list", kind: "http_500", count: 10_000 });
  const answers: string[] = [];
  try {
    // The waiting page reloads; here every 5 minutes for 70 minutes, the reconciler between.
    for (let minute = 0; minute <= 70; minute += 5) {
      const back = await fetch(stack().services.links.returnUrl(shopper.payment, "ok"), { redirect: "manual" });
      await back.text();
      answers.push(back.status === 303 ? "redirect" : String(back.status));
      offsetMs += 150_000;
      await reconcileOnce(stack().services, { worker: "t" });
      offsetMs += 150_000;
    }
  } finally {
    await stack().sandboxControl("/sandbox/faults", undefined, "DELETE");
  }
  const rows = await Promise.all([shopper, other].map(({ payment }) => db().payment.findUniqueOrThrow({ where: { id: payment.id } })));
  expect(rows[0]!.state).toBe("paid");
}, 120_000);
