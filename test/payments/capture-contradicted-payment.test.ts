// A capture Shopify asks for, of an authorization the app settled as paid on a signed webhook
// alone (CO), whose order the gateway's own record then showed unpaid (EX): the payment is
// flagged webhook_mismatch ("compare ... before shipping"), and the capture is refused while
// the gateway's record shows nothing received, the flag handled or not, so that Shopify does not
// book as captured crypto the gateway says never arrived. On SQLite and PostgreSQL.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseGatewayStatus, type ParsedGatewayStatus } from "../../app/gateway/statuses";
import { settleFromGatewayOrder, settleFromSignedWebhook } from "../../app/payments/settle-payment";
import { documentedOrder } from "../gateway/support/fixtures";
import { drainOutbox, harnessForFile, paymentWithSession, SHOP } from "../support/follow-up-routes";
import { ROW_DATABASES } from "../support/row-databases";

describe.each(ROW_DATABASES)("a capture of a payment the gateway's record contradicts, on $name", (database) => {
  const h = harnessForFile(database);
  const db = () => h().services.db;

  it("is refused while the gateway's read shows the order unpaid (webhook_mismatch open)", async () => {
    const gatewayOrderId = randomUUID();
    const { session, payment } = await paymentWithSession(h(), { state: "awaiting_payment", resolveInShopify: false, columns: { gatewayOrderId, gatewayStatus: "PE" } });
    // A signed CO webhook settles it: Shopify is told the authorization succeeded.
    const row = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
    const signed = await settleFromSignedWebhook(h().services, { payment: row, shopDomain: SHOP }, {
      identifier: gatewayOrderId,
      status: parseGatewayStatus("CO") as Extract<ParsedGatewayStatus, { known: true }>,
    });
    expect(signed?.payment.state).toBe("paid");
    await drainOutbox(h());
    expect(h().standin.state.session(session.id)?.state.code).toBe("RESOLVED");
    // The reconciler's read: the gateway's record shows the order expired, nothing received.
    const verified = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "EX", 0, "2026-11-25T10:00:00Z"), "reconcile", new Date());
    expect(verified.payment).toMatchObject({ state: "paid", attention: "webhook_mismatch", attentionResolvedAt: null });

    // The merchant captures in Shopify.
    const capture = await h().standin.state.startFollowUp("capture", session.id);
    expect(capture.delivery.status).toBe(201);
    const queued = await db().outboxMessage.findFirstOrThrow({ where: { payload: { contains: capture.session.gid } } });
    expect(queued.kind).toBe("capture.reject");
    expect(JSON.parse(queued.payload)).toMatchObject({ merchantMessage: expect.stringContaining("shows no crypto received (status EX), so there is nothing to capture") });

    await drainOutbox(h());
    expect(h().standin.state.session(capture.session.id)?.state.code).toBe("REJECTED");

    // The merchant compared the two and marked the flag handled: while the gateway's record
    // still shows nothing received, nothing is captured.
    await db().payment.update({ where: { id: payment.id }, data: { attentionResolvedAt: new Date() } });
    const again = await h().standin.state.startFollowUp("capture", session.id);
    expect(again.delivery.status).toBe(201);
    const refusedAgain = await db().outboxMessage.findFirstOrThrow({ where: { payload: { contains: again.session.gid } } });
    expect(refusedAgain.kind).toBe("capture.reject");
    expect(JSON.parse(refusedAgain.payload)).toMatchObject({ merchantMessage: expect.stringContaining("shows no crypto received (status EX)") });
    await drainOutbox(h());

    // The crypto had arrived: the merchant marks the order completed in the gateway dashboard,
    // the app reads it (CM), and a capture is taken.
    await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "CM", 1, "2026-11-25T11:00:00Z", payment), "check", new Date());
    const third = await h().standin.state.startFollowUp("capture", session.id);
    expect(third.delivery.status).toBe(201);
    const accepted = await db().outboxMessage.findFirstOrThrow({ where: { payload: { contains: third.session.gid } } });
    expect(accepted.kind).toBe("capture.resolve");
  });
});
