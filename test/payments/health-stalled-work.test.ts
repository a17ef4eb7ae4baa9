// The health page does not look fine while the merchant is needed: it names the payments whose
// flag nobody has handled yet, with the way to the Needs attention page, and it says so when a
// notification or an update for Shopify fell due minutes ago and no pass has taken it up (the
// app's background work stopped): before, a stopped worker left both backlogs as plain
// numbers, its rows never tried and so never counted as failing, and the page green.
import { describe, expect, it } from "vitest";
import { OVERDUE_AFTER_MS } from "../../app/admin/health.server";
import { deliverDueMessages } from "../../app/payments/outbox";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import { getAdminPage } from "../support/admin-pages";
import { movingClock, paymentThrough, stackOnDatabase, waitFor } from "../support/stack";

const UNDERPAID = [{ action: "choose_currency", currency: "ETH" }, { action: "pay", amount: "less" }, { action: "confirm" }] as const;
const STOPPED = "has not been taken up: the app's background work has stopped or fallen far behind";

describe.each(["sqlite", "postgresql"] as const)("on %s", (kind) => {
  // No workers: the app's background work is stopped until the test runs a pass itself.
  const time = movingClock(() => stack());
  const stack = stackOnDatabase(kind, { workers: false, clock: time.clock, env: { DEV_ADMIN_LOGIN: "true" } });

  const healthPage = async () => {
    const page = await getAdminPage(stack(), "/app/health");
    expect(page.status).toBe(200);
    return page;
  };
  const healthText = async () => (await healthPage()).text;

  it("names open flags, and work due that no pass took up, until a pass does; not an update waiting for its retry", async () => {
    const db = stack().services.db;
    const notified = (orderId: string) => waitFor(async () => (await db.gatewayWebhook.count({ where: { orderId, status: "IA" } })) > 0, "the order's IA notification");
    const first = await paymentThrough(stack(), UNDERPAID);
    const second = await paymentThrough(stack(), UNDERPAID);
    await notified(first.orderId);
    await notified(second.orderId);

    // Just stored: waiting, not overdue.
    const fresh = await healthText();
    expect(fresh).not.toContain(STOPPED);
    expect(fresh).not.toContain("need your attention");

    // Due for longer than a running app ever leaves it.
    time.advanceAppOnly(OVERDUE_AFTER_MS + 60_000);
    const stalledInbox = await healthText();
    expect(stalledInbox).toContain(`The oldest notification was due 6 minutes ago and ${STOPPED}`);
    expect(stalledInbox).not.toContain("The oldest update");

    // A pass takes the notifications: both payments are rejected as underpaid and flagged; their
    // updates for Shopify have just fallen due. Shopify asked the app to wait with the second's
    // (a backoff, a Retry-After): it is due in an hour.
    await processWebhookInbox(stack().services, { worker: "test" });
    for (const { payment } of [first, second]) expect((await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).attention).toBe("underpaid");
    const inAnHour = new Date(time.clock.now().getTime() + 60 * 60_000);
    expect((await db.outboxMessage.updateMany({ where: { paymentId: second.payment.id, status: "pending" }, data: { nextAttemptAt: inAnHour, attempts: 1 } })).count).toBe(1);
    const flagged = await healthPage();
    expect(flagged.text).not.toContain(STOPPED);
    expect(flagged.text).toContain("2 payments need your attention");
    expect(flagged.html).toContain('href="/app/attention');

    time.advanceAppOnly(OVERDUE_AFTER_MS + 60_000);
    expect(await healthText()).toContain(`The oldest update was due 6 minutes ago and ${STOPPED}`);

    // A pass sends the first's: nothing is overdue (the second's waits for its time); the flags
    // stay until the merchant handles them.
    await deliverDueMessages(stack().services, { worker: "test" });
    expect(await db.outboxMessage.count({ where: { paymentId: first.payment.id, status: "pending" } })).toBe(0);
    const sent = await healthText();
    expect(sent).not.toContain(STOPPED);
    expect(sent).toContain("2 payments need your attention");
  });
});
