// A capture of an authorization whose gateway order shows a status the app cannot interpret.
// The payment was settled paid on a signed webhook (CO); the gateway's own record then showed
// a status no one knows. "Unknown gateway status" tells the merchant to decide by hand, and
// that the app never treats it as paid: a capture would book the crypto as taken, so it is
// held until a person has marked the flag handled, like the flags of a contradicted
// notification or of an order for another amount. The unknown status also takes the place of
// a contradicted notification's flag on a later read, and the capture stays held then. On
// SQLite and PostgreSQL.
import { describe, expect, it } from "vitest";
import { settleFromGatewayOrder } from "../../app/payments/settle-payment";
import { documentedOrder } from "../gateway/support/fixtures";
import { askedToCapture, drainOutbox, harnessForFile, paidOnSignedNotification } from "../support/follow-up-routes";
import { ROW_DATABASES } from "../support/row-databases";

describe.each(ROW_DATABASES)("a capture of a payment whose gateway order shows an unknown status, on $name", (database) => {
  const h = harnessForFile(database);
  const db = () => h().services.db;

  it("is refused while the unknown status is flagged, and taken once the flag is handled", async () => {
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
});
