// A return's read of the shop's orders makes no look-ups and leaves payments near the end of
// Shopify's window to the reconciler: a paid payment whose order was made through the
// merchant's previous device (left out of the current device's listing, readable by its
// identifier) is looked up and resolved by the reconciler while shoppers keep returning, never
// rejected as "could not be read".
import { expect, it } from "vitest";
import { FINALISE_AFTER_MS, FINALISE_UNREAD_AFTER_MS } from "../../app/payments/reconcile";
import { connectAnotherSandboxDevice, movingClock, PAID_IN_FULL, paymentThrough, setWebhookFaults, shoppersKeepReturning, stackForFile } from "../support/stack";

const time = movingClock(() => stack());
const stack = stackForFile({ workers: false, clock: time.clock, gatewayRetry: { baseDelayMs: 5, maxDelayMs: 20 } });

it("a paid order of the previous device is not rejected unread while shoppers keep returning near the end of the window", async () => {
  await setWebhookFaults(stack(), "drop");
  // Paid in full through the previous device; its webhooks lost.
  const old = await paymentThrough(stack(), PAID_IN_FULL);
  await connectAnotherSandboxDevice(stack());
  await setWebhookFaults(stack(), "drop");
  await time.advance(FINALISE_AFTER_MS + 30_000);

  // Shoppers of the new device whose webhooks were lost keep returning; the reconciler runs between them.
  await shoppersKeepReturning(stack(), time, FINALISE_UNREAD_AFTER_MS + 5 * 60_000);
  const row = await stack().services.db.payment.findUniqueOrThrow({ where: { id: old.payment.id } });
  expect(row).toMatchObject({ state: "paid", gatewayStatus: "CO" });
}, 180_000);
