// The health page tells the merchant when the gateway's notifications do not reach the shop's
// payments. The gateway notifies every change of an order's status, so each payment that ended
// at a final status at the gateway should have had one; when none came (the device's
// notification URL never set, set to another shop that used the device, or the gateway refused
// on the way), the payments still settle through the app's own reads, later, and nothing else
// on the page shows why. A notification that comes shortly after the app's own read settled the
// payment is waited for before the payment counts.
import { beforeAll, describe, expect, it } from "vitest";
import { checkPaymentNow } from "../../app/payments/check-payment";
import { deliverDueMessages } from "../../app/payments/outbox";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import { getAdminPage } from "../support/admin-pages";
import { movingClock, PAID_IN_FULL, paymentThrough, setWebhookFaults, stackOnDatabase, waitFor } from "../support/stack";

const MINUTE = 60_000;

describe.each(["sqlite", "postgresql"] as const)("on %s", (kind) => {
  const time = movingClock(() => stack());
  const stack = stackOnDatabase(kind, { workers: false, clock: time.clock, env: { DEV_ADMIN_LOGIN: "true" } });
  beforeAll(() => stack().logger.info("health unnotified payments: started"));

  const healthText = async () => {
    const page = await getAdminPage(stack(), "/app/health");
    expect(page.status).toBe(200);
    return page.text;
  };

  /** A payment paid in full at the gateway, settled by the app's own read of its order. */
  async function paidAndReadByTheApp() {
    const { payment } = await paymentThrough(stack(), PAID_IN_FULL);
    const read = await checkPaymentNow(stack().services, payment.shopId, payment.id);
    expect(read.ok).toBe(true);
    const settled = await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(settled.finalizedAt).not.toBeNull();
    return settled;
  }

  /** A payment paid in full whose notifications reach the app, settled by processing them. */
  async function paidAndNotified() {
    const { payment } = await paymentThrough(stack(), PAID_IN_FULL);
    const db = stack().services.db;
    await waitFor(async () => (await db.gatewayWebhook.count({ where: { orderId: payment.gatewayOrderId!, status: "CO" } })) > 0, "the paid order's CO notification");
    await processWebhookInbox(stack().services, { worker: "test" });
    await deliverDueMessages(stack().services, { worker: "test" });
    expect((await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).finalizedAt).not.toBeNull();
  }

  it("says whether the gateway's notifications reached the payments that finished lately, how many did not, and where to look; not of payments too recent or too old", async () => {
    expect(await healthText()).not.toContain("finished in the last 7 days");

    // A payment notified as it went. Just finished, it is not counted yet; then it is.
    await paidAndNotified();
    expect(await healthText()).not.toContain("finished in the last 7 days");
    // Moving the app's clock alone from here on: the gateway signs its notifications with its own.
    time.advanceAppOnly(11 * MINUTE);
    expect(await healthText()).toContain("A notification came for the gateway sandbox payment that finished in the last 7 days.");

    // The device's notifications are lost: the next payment settles through the app's read alone.
    await setWebhookFaults(stack(), "drop");
    await paidAndReadByTheApp();
    time.advanceAppOnly(11 * MINUTE);
    const some = await healthText();
    expect(some).toContain(
      "1 of the 2 gateway sandbox payments that finished in the last 7 days had no notification from the gateway: the app settled it with its own checks, later than a notification would have.",
    );
    expect(some).toContain("A few can be lost on the way; if most are, check the device's notification URL on Connection");
    expect(some).not.toContain("live payment");

    // A week on, both are out of the window; a payment since had no notification either: none had.
    time.advanceAppOnly(7 * 24 * 60 * MINUTE);
    expect(await healthText()).not.toContain("finished in the last 7 days");
    await paidAndReadByTheApp();
    time.advanceAppOnly(11 * MINUTE);
    const none = await healthText();
    expect(none).toContain(
      "The gateway sandbox payment that finished in the last 7 days had no notification from the gateway: the app settled it with its own checks, later than a notification would have.",
    );
    expect(none).toContain("Check that the device's notification URL in the gateway dashboard is this shop's, shown on Connection");
    await paidAndReadByTheApp();
    time.advanceAppOnly(11 * MINUTE);
    expect(await healthText()).toContain(
      "None of the 2 gateway sandbox payments that finished in the last 7 days had a notification from the gateway: the app settled them with its own checks",
    );
  }, 60_000);
});
