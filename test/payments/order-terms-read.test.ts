// A gateway read that shows the payment's order for another fiat or amount than Shopify's
// payment: the payment is never marked paid on it (Shopify hears nothing), the merchant is
// told once (amount_mismatch) with both amounts, a paid payment's capture waits for a person,
// and the payment's own amount written with a float's noise is the same amount. On SQLite and
// PostgreSQL, through the app's settlement and Shopify's stand-in.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { GatewayOrder } from "../../app/gateway/schemas";
import { attentionAdvice } from "../../app/admin/attention";
import { settleFromGatewayOrder } from "../../app/payments/settle-payment";
import { documentedOrder } from "../gateway/support/fixtures";
import { askedToCapture, drainOutbox, harnessForFile, paidOnSignedNotification, paymentWithSession } from "../support/follow-up-routes";
import { ROW_DATABASES } from "../support/row-databases";

describe.each(ROW_DATABASES)("a read of an order for other terms than its payment's, on $name", (database) => {
  const h = harnessForFile(database);
  const db = () => h().services.db;
  const flags = async (paymentId: string) =>
    (await db().paymentEvent.findMany({ where: { paymentId, type: "attention" }, orderBy: { id: "asc" } })).map((e) => JSON.parse(e.detail) as { reason: string; detail: string });
  const finalMessages = (gid: string) => db().outboxMessage.count({ where: { payload: { contains: gid }, kind: { in: ["payment.resolve", "payment.reject"] } } });

  async function openPayment() {
    const gatewayOrderId = randomUUID();
    const { session, payment } = await paymentWithSession(h(), { kind: "sale", state: "awaiting_payment", resolveInShopify: false, columns: { gatewayOrderId, gatewayStatus: "PE" } });
    return { session, payment, gatewayOrderId };
  }

  it("flags the order as soon as a read shows it, and never resolves the payment when it is paid: Shopify hears nothing", async () => {
    const { session, payment, gatewayOrderId } = await openPayment();
    // A tenth of the amount, in the payment's fiat: the order the shopper is paying is not this payment's.
    const tenth = { amount: (Number(payment.amount) / 10).toFixed(2), currency: payment.currency };
    const waiting = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "PE", 0, "2026-11-25T10:00:00Z", tenth), "return", new Date());
    expect(waiting.payment).toMatchObject({ state: "awaiting_payment", attention: "amount_mismatch", attentionResolvedAt: null });
    expect(waiting.payment.attentionDetail).toBe(`The gateway order is for ${tenth.amount} ${tenth.currency}, but Shopify's payment is for ${payment.amount} ${payment.currency}.`);

    const confirming = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "AC", 1, "2026-11-25T10:05:00Z", tenth), "reconcile", new Date());
    expect(confirming.decision).toMatchObject({ kind: "review", attention: "amount_mismatch" });
    expect(confirming.payment.state).toBe("awaiting_payment");
    const paid = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "CO", 1, "2026-11-25T10:10:00Z", tenth), "reconcile", new Date());
    expect(paid.decision).toMatchObject({ kind: "review", attention: "amount_mismatch" });
    expect(paid.payment).toMatchObject({ state: "awaiting_payment", gatewayStatus: "CO", attention: "amount_mismatch" });
    expect(paid.finalMessage).toBeNull();
    // Flagged once for what differs, however many reads show it.
    expect((await flags(payment.id)).map((f) => f.reason)).toEqual(["amount_mismatch"]);

    await drainOutbox(h());
    expect(await finalMessages(payment.gid)).toBe(0);
    expect(h().standin.state.session(session.id)?.state.code).not.toBe("RESOLVED");
    expect(attentionAdvice("amount_mismatch").title).toBe("Gateway order is for another amount");
  });

  it("flags an order in another fiat, and a rejection of it still rejects the payment", async () => {
    const { payment, gatewayOrderId } = await openPayment();
    const inPesos = { amount: payment.amount, currency: "MXN" };
    const read = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "PE", 0, "2026-11-25T10:00:00Z", inPesos), "return", new Date());
    expect(read.payment.attentionDetail).toBe(`The gateway order is for ${payment.amount} MXN, but Shopify's payment is for ${payment.amount} ${payment.currency}.`);
    // Expired unpaid: Shopify is told the payment was not made, whatever the order's terms.
    const expired = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "EX", 0, "2026-11-25T10:30:00Z", inPesos), "reconcile", new Date());
    expect(expired.payment.state).toBe("failed");
    expect(expired.finalMessage).not.toBeNull();
    expect(await finalMessages(payment.gid)).toBe(1);
  });

  it("takes the payment's own amount written with a float's noise as that amount: the payment is paid", async () => {
    const { payment, gatewayOrderId } = await openPayment();
    const noisy = { ...documentedOrder(gatewayOrderId, "CO", 1, "2026-11-25T10:00:00Z", payment), fiat_amount: `${payment.amount}00000000000006` } as GatewayOrder;
    const paid = await settleFromGatewayOrder(h().services, payment.id, noisy, "reconcile", new Date());
    expect(paid.payment).toMatchObject({ state: "paid", attention: null });
    expect(paid.finalMessage).not.toBeNull();
    // One minor unit more is another amount.
    const other = await openPayment();
    const cent = { ...documentedOrder(other.gatewayOrderId, "CO", 1, "2026-11-25T10:00:00Z", other.payment), fiat_amount: (Number(other.payment.amount) + 0.01).toFixed(2) } as GatewayOrder;
    const refused = await settleFromGatewayOrder(h().services, other.payment.id, cent, "reconcile", new Date());
    expect(refused.payment).toMatchObject({ state: "awaiting_payment", attention: "amount_mismatch" });
  });

  it("a payment paid on a signed webhook whose read then shows another amount stays paid, is flagged, and its capture waits until a person handled the flag", async () => {
    const { session, payment, gatewayOrderId } = await paidOnSignedNotification(h());

    const half = { amount: (Number(payment.amount) / 2).toFixed(2), currency: payment.currency };
    const verified = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "CO", 1, "2026-11-25T10:00:00Z", half), "reconcile", new Date());
    expect(verified.payment).toMatchObject({ state: "paid", attention: "amount_mismatch", attentionResolvedAt: null, unverifiedSince: null });
    const events = await db().paymentEvent.findMany({ where: { paymentId: payment.id }, select: { type: true } });
    expect(events.map((e) => e.type)).not.toContain("verified");

    const refused = await askedToCapture(h(), session.id);
    expect(refused.kind).toBe("capture.reject");
    expect(refused.merchantMessage).toContain("is not for the payment's amount or currency");
    await drainOutbox(h());

    // The merchant compared the two (the shopper paid the rest another way, say) and handled the flag.
    await db().payment.update({ where: { id: payment.id }, data: { attentionResolvedAt: new Date() } });
    expect((await askedToCapture(h(), session.id)).kind).toBe("capture.resolve");
    await drainOutbox(h());
  });
});
