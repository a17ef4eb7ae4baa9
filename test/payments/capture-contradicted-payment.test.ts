// A capture Shopify asks for, of an authorization the app settled as paid on a signed webhook
// alone (CO), whose order the gateway's own record then showed unpaid (EX): the payment is
// flagged webhook_mismatch ("compare ... before shipping"), and the capture is refused while
// the gateway's record shows nothing received, the flag handled or not, so that Shopify does not
// book as captured crypto the gateway says never arrived. When a later read shows a status no
// one can interpret, that flag ("decide by hand; never treated as paid") takes the place of the
// contradicted notification's and holds the capture as well, until a person has marked it
// handled or the gateway shows a known status again (then the payment is decided on that). On
// SQLite and PostgreSQL.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { settleFromGatewayOrder } from "../../app/payments/settle-payment";
import { documentedOrder } from "../gateway/support/fixtures";
import { askedToCapture, drainOutbox, harnessForFile, paidOnSignedNotification, paymentWithSession } from "../support/follow-up-routes";
import { ROW_DATABASES } from "../support/row-databases";

describe.each(ROW_DATABASES)("a capture of a payment the gateway's record contradicts, on $name", (database) => {
  const h = harnessForFile(database);
  const db = () => h().services.db;

  it("is refused while the gateway's read shows the order unpaid (webhook_mismatch open)", async () => {
    // A signed CO webhook settles it: Shopify is told the authorization succeeded.
    const { session, payment, gatewayOrderId } = await paidOnSignedNotification(h());
    // The reconciler's read: the gateway's record shows the order expired, nothing received.
    const verified = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "EX", 0, "2026-11-25T10:00:00Z"), "reconcile", new Date());
    expect(verified.payment).toMatchObject({ state: "paid", attention: "webhook_mismatch", attentionResolvedAt: null });

    // The merchant captures in Shopify.
    const capture = await askedToCapture(h(), session.id);
    expect(capture.kind).toBe("capture.reject");
    expect(capture.merchantMessage).toContain("shows no crypto received (status EX), so there is nothing to capture");

    await drainOutbox(h());
    expect(h().standin.state.session(capture.session.id)?.state.code).toBe("REJECTED");

    // The merchant compared the two and marked the flag handled: while the gateway's record
    // still shows nothing received, nothing is captured.
    await db().payment.update({ where: { id: payment.id }, data: { attentionResolvedAt: new Date() } });
    const again = await askedToCapture(h(), session.id);
    expect(again.kind).toBe("capture.reject");
    expect(again.merchantMessage).toContain("shows no crypto received (status EX)");
    await drainOutbox(h());

    // The crypto had arrived: the merchant marks the order completed in the gateway dashboard,
    // the app reads it (CM), and a capture is taken.
    await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "CM", 1, "2026-11-25T11:00:00Z", payment), "check", new Date());
    expect((await askedToCapture(h(), session.id)).kind).toBe("capture.resolve");
  });

  it.each([
    ["IA", "underpaid"],
    ["OC", "out_of_condition"],
  ] as const)("is refused while the gateway's record shows the order ended unpaid (%s), after a later read put its own flag (%s) in place of webhook_mismatch", async (status, flag) => {
    const { session, payment, gatewayOrderId } = await paidOnSignedNotification(h());
    // The reconciler's read contradicts the CO notification: crypto arrived, but not the order's due.
    const first = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, status, 1, "2026-11-25T10:00:00Z", payment), "reconcile", new Date());
    expect(first.payment).toMatchObject({ state: "paid", attention: "webhook_mismatch" });
    // The merchant's Check now reads it again: the order's own flag takes the slot.
    const checked = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, status, 1, "2026-11-25T10:05:00Z", payment), "check", new Date());
    expect(checked.payment).toMatchObject({ state: "paid", gatewayStatus: status, attention: flag, attentionResolvedAt: null });

    const capture = await askedToCapture(h(), session.id);
    expect(capture.kind).toBe("capture.reject");
    expect(capture.merchantMessage).toContain(`(status ${status})`);
    await drainOutbox(h());
  });

  it("is held by the flag of a status no one can interpret that a later read raises in its place", async () => {
    const { session, payment, gatewayOrderId } = await paidOnSignedNotification(h());
    // The gateway's record: an expired order (the notification contradicted), then a status
    // no one knows, on the order holding the shopper's crypto.
    const contradicted = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "EX", 0, "2026-11-25T10:00:00Z"), "reconcile", new Date());
    expect(contradicted.payment).toMatchObject({ state: "paid", attention: "webhook_mismatch", attentionResolvedAt: null });
    const unknown = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "ZQ", 1, "2026-11-25T11:00:00Z", payment), "check", new Date());
    expect(unknown.payment).toMatchObject({ state: "paid", gatewayStatus: "ZQ", attention: "unknown_status", attentionResolvedAt: null });

    const capture = await askedToCapture(h(), session.id);
    expect(capture.kind).toBe("capture.reject");
    expect(capture.merchantMessage).toContain("status the app cannot interpret");
    expect(capture.merchantMessage).toContain("mark the payment's flag handled in the app, then capture again");
    await drainOutbox(h());
    expect(h().standin.state.session(capture.session.id)?.state.code).toBe("REJECTED");

    // The merchant looked at the order in the gateway dashboard and marked the flag handled.
    await db().payment.update({ where: { id: payment.id }, data: { attentionResolvedAt: new Date() } });
    expect((await askedToCapture(h(), session.id)).kind).toBe("capture.resolve");
  });

  it("is no longer held by an unknown status once the gateway's record shows a known one", async () => {
    const gatewayOrderId = randomUUID();
    const { session, payment } = await paymentWithSession(h(), { state: "awaiting_payment", resolveInShopify: false, columns: { gatewayOrderId, gatewayStatus: "PE" } });
    // A status no one knows on the way, then the order completed with the shopper's crypto.
    const unknown = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "ZQ", 0, "2026-11-25T10:00:00Z", payment), "reconcile", new Date());
    expect(unknown.payment).toMatchObject({ state: "awaiting_payment", attention: "unknown_status", attentionResolvedAt: null });
    const completed = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "CO", 1, "2026-11-25T11:00:00Z", payment), "reconcile", new Date());
    expect(completed.payment).toMatchObject({ state: "paid", gatewayStatus: "CO", attention: "unknown_status", attentionResolvedAt: null });
    await drainOutbox(h());
    expect(h().standin.state.session(session.id)?.state.code).toBe("RESOLVED");

    expect((await askedToCapture(h(), session.id)).kind).toBe("capture.resolve");
  });
});
