// The Payments Apps contract: sessions of one checkout share a `group`, at most one session
// of a group is resolved, and a session the app marked pending is finalised later by resolve or
// reject. A shopper who went back to checkout and paid the second crypto session of a checkout
// whose first one is resolved: once Shopify refuses its resolve, the second session is rejected
// (not left pending), and the merchant is told to refund its crypto.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { enqueuePending } from "../../app/payments/pending";
import { settleFromGatewayOrder } from "../../app/payments/settle-payment";
import { documentedOrder } from "../gateway/support/fixtures";
import { drainOutbox, harnessForFile, operationNames, paymentWithSession } from "../support/follow-up-routes";
import { paymentColumns } from "../support/payment-rows";
import { ROW_DATABASES } from "../support/row-databases";

describe("a second paid session of a checkout whose first session is resolved", () => {
  const h = harnessForFile(ROW_DATABASES[0]!);

  it("is finalised (rejected, with the merchant flagged) once Shopify refuses its resolve, instead of being left pending", async () => {
    const db = () => h().services.db;
    // The checkout's first crypto session: paid, and resolved in Shopify.
    const first = await paymentWithSession(h(), { kind: "sale" });
    expect(h().standin.state.session(first.session.id)?.state.code).toBe("RESOLVED");

    // The shopper's second session of the same checkout (same group), taken by the app.
    const second = h().standin.state.createPaymentSession({ test: true, kind: "sale" }, { sameCheckoutAs: first.session.id });
    expect(second.group).toBe(first.session.group);
    const gatewayOrderId = randomUUID();
    const payment = await db().payment.create({
      data: paymentColumns(h().shopId, {
        shopifyPaymentId: second.id,
        gid: second.gid,
        groupId: second.group,
        amount: second.request.amount,
        currency: second.request.currency,
        kind: "sale",
        state: "awaiting_payment",
        gatewayOrderId,
        gatewayStatus: "PE",
      }),
    });

    // The shopper came back before paying: Shopify is told the payment is pending.
    const row = await db().payment.findUniqueOrThrow({ where: { id: payment.id }, include: { shop: true } });
    await enqueuePending(h().services, row, "BUYER_ACTION_REQUIRED");
    await drainOutbox(h());
    expect(h().standin.state.session(second.id)?.state.code).toBe("PENDING");

    // The shopper pays this second order too.
    const settled = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "CO", 1, "2026-11-25T10:00:00Z", payment), "reconcile", new Date());
    expect(settled.payment.state).toBe("paid");
    await drainOutbox(h());

    // The contract: the pending session is finalised, and no second session of the group is resolved.
    expect({
      shopifyState: h().standin.state.session(second.id)?.state.code,
      calls: operationNames(h(), second.gid),
    }).toEqual({
      shopifyState: "REJECTED",
      // The resolve Shopify refuses is what tells the app: nothing is looked up on a resolve's way.
      calls: ["PaymentSessionPending", "PaymentSessionResolve", "PaymentSessionReject"],
    });
    // The merchant is told the shopper paid twice.
    const after = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(after).toMatchObject({ state: "paid", shopifyOutcome: "rejected", attention: "paid_twice" });
  });
});
