// An authorization a signed notification marked paid (Shopify holds it as authorized), whose
// gateway order the app then read as expired with nothing received: every capture is refused
// while the gateway's record shows nothing received, also after the merchant marked the
// mismatch flag handled in the admin, so Shopify never books as captured crypto that never
// came. On SQLite and PostgreSQL (capture-contradicted-payment follows the crypto arriving).
import { describe, expect, it } from "vitest";
import { currentFlag, markAttentionHandled } from "../../app/admin/payments.server";
import { settleFromGatewayOrder } from "../../app/payments/settle-payment";
import { documentedOrder } from "../gateway/support/fixtures";
import { drainOutbox, harnessForFile, paidOnSignedNotification } from "../support/follow-up-routes";
import { ROW_DATABASES } from "../support/row-databases";

describe.each(ROW_DATABASES)("a capture of an authorization the gateway shows nothing received for, on $name", (database) => {
  const h = harnessForFile(database);
  const db = () => h().services.db;
  const queued = async (gid: string) => {
    const stored = await db().outboxMessage.findFirstOrThrow({ where: { payload: { contains: gid } } });
    return { kind: stored.kind, merchantMessage: (JSON.parse(stored.payload) as { merchantMessage?: string }).merchantMessage ?? "" };
  };

  it("is refused again after the merchant marked the mismatch flag handled, as the first refusal told them to; nothing is captured in Shopify", async () => {
    const { session, payment, gatewayOrderId } = await paidOnSignedNotification(h());
    // The gateway's own record: the order expired, nothing received.
    const read = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "EX", 0, "2026-11-25T10:00:00Z"), "reconcile", new Date(Date.now() + 60_000));
    expect(read.payment).toMatchObject({ state: "paid", gatewayStatus: "EX", attention: "webhook_mismatch", attentionResolvedAt: null });

    const first = await h().standin.state.startFollowUp("capture", session.id);
    expect((await queued(first.session.gid)).kind).toBe("capture.reject");
    await drainOutbox(h());
    expect(h().standin.state.session(first.session.id)?.state.code).toBe("REJECTED");

    // The merchant compares the order in the gateway dashboard (nothing arrived) and marks the flag handled.
    const flagged = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
    await markAttentionHandled(db(), h().shopId, payment.id, await currentFlag(db(), flagged), new Date());
    expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).attentionResolvedAt).not.toBeNull();

    const again = await h().standin.state.startFollowUp("capture", session.id);
    const answer = await queued(again.session.gid);
    expect(answer.kind).toBe("capture.reject");
    expect(answer.merchantMessage).toMatch(/no crypto/i);
    await drainOutbox(h());
    expect(h().standin.state.session(again.session.id)?.state.code).toBe("REJECTED");
  });
});
