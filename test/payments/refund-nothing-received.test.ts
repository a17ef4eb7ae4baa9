// A refund Shopify asks for is refused (the gateway has no refund API), and the refusal tells
// the merchant what to do by hand, fitting the payment the app holds:
// - a sale Shopify holds as paid on a signed notification that the gateway's own record then
//   contradicted (the order expired, nothing received): there is nothing at the gateway to
//   refund, and the merchant is not sent to refund crypto that never arrived;
// - a paid sale whose crypto the gateway shows received: refund it from the gateway dashboard;
// - a refund naming a payment the app has no record of says so, as a capture or void of one does.
// On SQLite and PostgreSQL.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { paymentDetail } from "../../app/admin/payments.server";
import { settleFromGatewayOrder } from "../../app/payments/settle-payment";
import { documentedOrder } from "../gateway/support/fixtures";
import { drainOutbox, harnessForFile, paidOnSignedNotification, paymentWithSession, post } from "../support/follow-up-routes";
import { ROW_DATABASES } from "../support/row-databases";

const GATEWAY_REFUND = /refund in the gateway dashboard|from the gateway dashboard/;

describe.each(ROW_DATABASES)("refunds of payments the gateway shows nothing received for, on $name", (database) => {
  const h = harnessForFile(database);
  const db = () => h().services.db;
  const queued = async (gid: string) => {
    const stored = await db().outboxMessage.findFirstOrThrow({ where: { payload: { contains: gid } } });
    return { kind: stored.kind, merchantMessage: (JSON.parse(stored.payload) as { merchantMessage?: string }).merchantMessage ?? "" };
  };
  const timeline = async (paymentId: string) => (await paymentDetail(db(), h().shopId, paymentId))!.timeline.map((e) => `${e.title}: ${e.description}`);

  it("a refund of a sale Shopify holds as paid while the gateway's record shows it expired unpaid: refused without sending the merchant to refund at the gateway", async () => {
    // A signed CO notification settles the sale; Shopify marks the order paid.
    const { session, payment, gatewayOrderId } = await paidOnSignedNotification(h(), "sale");
    // The gateway's own record then shows the order expired with nothing received.
    const read = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "EX", 0, "2026-11-25T10:00:00Z"), "reconcile", new Date(Date.now() + 60_000));
    expect(read.payment).toMatchObject({ state: "paid", gatewayStatus: "EX", attention: "webhook_mismatch" });

    // The merchant refunds the order in Shopify.
    const refund = await h().standin.state.startFollowUp("refund", session.id);
    expect(refund.delivery.status).toBe(201);
    const answer = await queued(refund.session.gid);
    expect(answer.kind).toBe("refund.reject");
    expect(answer.merchantMessage).not.toMatch(GATEWAY_REFUND);
    expect(answer.merchantMessage).toMatch(/no crypto/i);
    const entry = (await timeline(payment.id)).find((line) => line.startsWith("Refund requested in Shopify"));
    expect(entry).toBeDefined();
    expect(entry).not.toMatch(GATEWAY_REFUND);
    expect(entry).toMatch(/no crypto/i);
    await drainOutbox(h());
    expect(h().standin.state.session(refund.session.id)?.state.code).toBe("REJECTED");
  });

  it("a refund of a paid sale whose crypto the gateway shows received still says how to refund it from the gateway dashboard", async () => {
    const { session, payment } = await paymentWithSession(h(), { kind: "sale" });
    const refund = await h().standin.state.startFollowUp("refund", session.id);
    const answer = await queued(refund.session.gid);
    expect(answer.kind).toBe("refund.reject");
    expect(answer.merchantMessage).toMatch(/issue the refund in the gateway dashboard/);
    expect((await timeline(payment.id)).find((line) => line.startsWith("Refund requested in Shopify"))).toMatch(/refund the payment once from the gateway dashboard/);
  });

  it("a refund naming a payment the app has no record of says so, as a capture or a void of one does", async () => {
    const id = randomUUID().replace(/-/g, "");
    const gid = `gid://shopify/RefundSession/${id}`;
    const body = { id, gid, payment_id: randomUUID(), amount: "49.90", currency: "EUR", merchant_locale: "en", proposed_at: new Date().toISOString(), test: true };
    expect((await post(h(), "refund", body)).status).toBe(201);
    const answer = await queued(gid);
    expect(answer.kind).toBe("refund.reject");
    expect(answer.merchantMessage).toBe("This app has no record of the payment to refund.");
  });
});
