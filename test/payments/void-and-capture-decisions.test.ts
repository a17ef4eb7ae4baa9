// What a void or a capture of a crypto authorization is answered, on SQLite and PostgreSQL,
// where the crypto and the gateway's record stand otherwise than plainly paid:
// - a void of an authorization not captured is accepted, as the merchant asks: Shopify refunds
//   only what was captured, so a refused void left an authorization that could only be
//   captured. Crypto the gateway already shows for it is flagged to refund from the gateway
//   dashboard; an authorization the gateway's record shows unpaid (a notification said paid,
//   the order expired) is voided with no such flag;
// - a void after a capture is refused, with how to refund;
// - a capture of a payment that only a signed notification marked paid, whose order the app
//   could not read before deciding, is refused with a word to try again: Shopify would
//   otherwise book crypto the gateway's record may then say never arrived.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { settleFromGatewayOrder } from "../../app/payments/settle-payment";
import { documentedOrder } from "../gateway/support/fixtures";
import { drainOutbox, harnessForFile, paidOnSignedNotification, paymentWithSession, post } from "../support/follow-up-routes";
import { ROW_DATABASES } from "../support/row-databases";

/** A void as Shopify sends it, for a session Shopify itself would not open (a retry or a bug on either side could still bring it). */
function voidBody(paymentId: string) {
  const id = randomUUID().replace(/-/g, "");
  return { id, gid: `gid://shopify/VoidSession/${id}`, payment_id: paymentId, merchant_locale: "en", proposed_at: new Date().toISOString(), test: true };
}

describe.each(ROW_DATABASES)("voids and captures of crypto authorizations on $name", (database) => {
  const h = harnessForFile(database);
  const db = () => h().services.db;
  const queued = async (gid: string) => {
    const stored = await db().outboxMessage.findFirstOrThrow({ where: { payload: { contains: gid } } });
    return { kind: stored.kind, merchantMessage: (JSON.parse(stored.payload) as { merchantMessage?: string }).merchantMessage ?? "" };
  };


  it("a void of a paid authorization not captured is accepted, and the payment flagged: the crypto is the shopper's, to refund from the gateway dashboard", async () => {
    const { session, payment } = await paymentWithSession(h());
    const voiding = await h().standin.state.startFollowUp("void", session.id);
    expect(voiding.delivery.status).toBe(201);
    expect((await queued(voiding.session.gid)).kind).toBe("void.resolve");
    const flagged = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(flagged).toMatchObject({ state: "paid", attention: "paid_after_void", attentionResolvedAt: null });
    expect(flagged.attentionDetail).toContain("crypto had already arrived at the gateway for it (status CO). It belongs to the shopper: refund it from the gateway dashboard");
    await drainOutbox(h());
    expect(h().standin.state.session(voiding.session.id)?.state.code).toBe("RESOLVED");
  });

  it("a second void of an authorization already voided is accepted without raising the first void's flag again, handled or not", async () => {
    const { session, payment } = await paymentWithSession(h());
    const first = await h().standin.state.startFollowUp("void", session.id);
    expect(first.delivery.status).toBe(201);
    await drainOutbox(h());
    const flagged = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(flagged).toMatchObject({ attention: "paid_after_void", attentionResolvedAt: null });
    // The merchant refunds the shopper and marks the flag handled.
    await db().payment.update({ where: { id: payment.id }, data: { attentionResolvedAt: new Date() } });

    const again = voidBody(session.id);
    expect((await post(h(), "void", again)).status).toBe(201);
    expect((await queued(again.gid)).kind).toBe("void.resolve");
    const after = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(after).toMatchObject({ attention: "paid_after_void", attentionDetail: flagged.attentionDetail, attentionResolvedAt: expect.any(Date) });
    expect(await db().paymentEvent.count({ where: { paymentId: payment.id, type: "attention" } })).toBe(1);
  });

  it("a void of a sale is refused, and the payment is not flagged: there is no authorization to void", async () => {
    const { session, payment } = await paymentWithSession(h(), { kind: "sale" });
    const voiding = voidBody(session.id);
    expect((await post(h(), "void", voiding)).status).toBe(201);
    const answer = await queued(voiding.gid);
    expect(answer.kind).toBe("void.reject");
    expect(answer.merchantMessage).toContain("was a sale");
    expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ state: "paid", attention: null });
    await drainOutbox(h());
  });

  it("a void Shopify refuses for good takes back the claim that the crypto is the shopper's: the refusal's flag takes its place", async () => {
    const { session, payment } = await paymentWithSession(h());
    // A void session Shopify does not hold: it refuses the app's answer as not found.
    const voiding = voidBody(session.id);
    expect((await post(h(), "void", voiding)).status).toBe(201);
    expect((await queued(voiding.gid)).kind).toBe("void.resolve");
    expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "paid_after_void", attentionResolvedAt: null });
    await drainOutbox(h());
    const after = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(after).toMatchObject({ attention: "shopify_error", attentionResolvedAt: null });
    expect(after.attentionDetail).toContain("void");
  });

  it("a void of an authorization whose gateway record shows nothing received (the notification that marked it paid contradicted) is accepted, with no claim that crypto arrived", async () => {
    const { session, payment, gatewayOrderId } = await paidOnSignedNotification(h());
    const read = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "EX", 0, "2026-11-25T10:00:00Z"), "reconcile", new Date(Date.now() + 60_000));
    expect(read.payment).toMatchObject({ state: "paid", attention: "webhook_mismatch", attentionResolvedAt: null });

    const voiding = await h().standin.state.startFollowUp("void", session.id);
    expect(voiding.delivery.status).toBe(201);
    expect((await queued(voiding.session.gid)).kind).toBe("void.resolve");
    // The mismatch flag stays, for the merchant to compare; nothing says crypto arrived.
    expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "webhook_mismatch", attentionResolvedAt: null });
  });

  it("a void after the authorization was captured is refused, with how to refund", async () => {
    const { session } = await paymentWithSession(h());
    const capture = await h().standin.state.startFollowUp("capture", session.id);
    expect((await queued(capture.session.gid)).kind).toBe("capture.resolve");
    await drainOutbox(h());
    // Shopify itself opens no void once captured; one that comes all the same is refused.
    const voiding = voidBody(session.id);
    expect((await post(h(), "void", voiding)).status).toBe(201);
    const answer = await queued(voiding.gid);
    expect(answer.kind).toBe("void.reject");
    expect(answer.merchantMessage).toMatch(/^This authorization was already captured, so it cannot be voided\. To return the crypto, issue the refund in the gateway dashboard/);
  });

  it("a capture of a payment only a notification marked paid, whose order cannot be read first, is refused with a word to try again; nothing is captured in Shopify", async () => {
    const { session, payment, gatewayOrderId } = await paidOnSignedNotification(h());
    // This shop holds no gateway credentials here: the capture's read of the order cannot be made.
    const capture = await h().standin.state.startFollowUp("capture", session.id);
    expect(capture.delivery.status).toBe(201);
    const answer = await queued(capture.session.gid);
    expect(answer.kind).toBe("capture.reject");
    expect(answer.merchantMessage).toBe(
      "A signed notification from the gateway marked this payment paid, and the app could not confirm it with the gateway's own record yet. Capture again in a few minutes.",
    );
    await drainOutbox(h());
    // The read, later: the order expired, nothing was received. Shopify never booked a capture.
    const read = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "EX", 0, "2026-11-25T10:00:00Z"), "reconcile", new Date(Date.now() + 60_000));
    expect(read.payment).toMatchObject({ attention: "webhook_mismatch" });
    expect(h().standin.state.session(capture.session.id)?.state.code).not.toBe("RESOLVED");
  });
});
