// The pending call's expiry is the end of the window the app keeps for the payment, counted
// from Shopify's payment session (the payment's creation), the same start the reconciler
// finalises from: a shopper who returns two days in does not have Shopify told the payment may
// stay pending for three more days, which the app would cut short by rejecting it at 70 hours.
import { describe, expect, it } from "vitest";
import { enqueuePending, PENDING_WINDOW_MS } from "../../app/payments/pending";
import { FINALISE_AFTER_MS } from "../../app/payments/reconcile";
import { drainOutbox, harnessForFile, paymentWithSession, SHOP } from "../support/follow-up-routes";
import { ROW_DATABASES } from "../support/row-databases";

const HOUR_MS = 3_600_000;

describe.each(ROW_DATABASES)("the pending call's expiry on $name", (database) => {
  const h = harnessForFile(database);

  const pendingFor = async (startedHoursAgo: number) => {
    const createdAt = new Date(Date.now() - startedHoursAgo * HOUR_MS);
    const { session, payment } = await paymentWithSession(h(), { state: "awaiting_payment", resolveInShopify: false, columns: { createdAt, gatewayStatus: "AC" } });
    const message = await enqueuePending(h().services, { ...payment, shop: { shopDomain: SHOP } }, "NETWORK_ACTION_REQUIRED");
    const payload = JSON.parse(message.payload) as { pendingExpiresAt: string };
    return { session, createdAt, expiresAt: new Date(payload.pendingExpiresAt) };
  };

  it("is the payment's window from its creation, after the reconciler's finalise point, for a return two days in", async () => {
    const { session, createdAt, expiresAt } = await pendingFor(48);
    expect(expiresAt.getTime()).toBe(createdAt.getTime() + PENDING_WINDOW_MS);
    expect(expiresAt.getTime()).toBeGreaterThan(createdAt.getTime() + FINALISE_AFTER_MS);
    // Shopify takes it: the session is pending until then.
    await drainOutbox(h());
    expect(h().standin.state.session(session.id)?.state).toMatchObject({ code: "PENDING", pendingExpiresAt: expiresAt.toISOString() });
  });

  it("is the same window for a return moments after the session began", async () => {
    const { createdAt, expiresAt } = await pendingFor(0);
    expect(expiresAt.getTime()).toBe(createdAt.getTime() + PENDING_WINDOW_MS);
  });
});
