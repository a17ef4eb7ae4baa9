// Which flag a gateway read leaves on a payment: crypto on an order that ended unpaid is a
// late payment whether the read rejects the payment or finds it rejected already; a read that
// verifies a signed webhook's own flagged reject keeps that flag (handled or not), and one that
// verifies a signed reject judges the transactions it lists as a first read would; a paid
// payment whose order then shows it ended unpaid is flagged; an unknown status is flagged
// once, not again at every read; an order completed with more than its amount is paid and
// flagged as overpaid, once for the amounts it shows, never over another open flag. On SQLite
// and PostgreSQL.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { currentFlag, markAttentionHandled } from "../../app/admin/payments.server";
import type { GatewayOrder } from "../../app/gateway/schemas";
import { silentLogger } from "../../app/lib/logger.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { settleFromGatewayOrder } from "../../app/payments/settle-payment";
import { documentedOrder } from "../gateway/support/fixtures";
import { DEFAULT_PAYMENT_TERMS } from "../support/payment-rows";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

/** The documented order, for the fiat and amount of the payments this file stores. */
const order = (identifier: string, status: string, transactions: number, editedAt: string) => documentedOrder(identifier, status, transactions, editedAt, DEFAULT_PAYMENT_TERMS);

describe.each(ROW_DATABASES)("on $name", (database) => {
  let rows: OpenedRows;
  const opened = rowsDatabaseForFile(database, { shopDomain: "flags.myshopify.com", webhookToken: "flags-webhook-token-0001" });
  beforeAll(() => void (rows = opened()));
  const deps = (): PaymentsDeps => ({ db: rows.db, sql: rows.sql, clock: { now: () => new Date() }, logger: silentLogger }) as unknown as PaymentsDeps;
  const read = (paymentId: string, gatewayOrder: GatewayOrder) => settleFromGatewayOrder(deps(), paymentId, gatewayOrder, "reconcile", new Date());
  const attentionEvents = async (paymentId: string) =>
    (await rows.db.paymentEvent.findMany({ where: { paymentId, type: "attention" }, orderBy: [{ at: "asc" }, { id: "asc" }] })).map((e) => (JSON.parse(e.detail) as { reason: string }).reason);

  it("a read that rejects an open payment whose expired order already holds crypto flags a late payment", async () => {
    const id = randomUUID();
    const payment = await createPayment(rows, { gatewayOrderId: id, gatewayStatus: "PE" });
    const settled = await read(payment.id, order(id, "EX", 1, "2026-11-24T10:00:00Z"));
    expect(settled.payment).toMatchObject({ state: "failed", attention: "late_payment" });
    // Nothing new on the next read: flagged once.
    await read(payment.id, order(id, "EX", 1, "2026-11-24T10:00:00Z"));
    expect(await attentionEvents(payment.id)).toEqual(["late_payment"]);
  });

  it("a transaction listed again, or twice, is not new: a handled late payment is not flagged again; one with another hash is", async () => {
    const id = randomUUID();
    const payment = await createPayment(rows, { gatewayOrderId: id, gatewayStatus: "PE" });
    const expired = order(id, "EX", 1, "2026-11-24T10:00:00Z");
    await read(payment.id, expired);
    await rows.db.payment.update({ where: { id: payment.id }, data: { attentionResolvedAt: new Date() } });
    const [sent] = expired.transactions;
    // The same transaction, listed twice by a later read.
    const twice = await read(payment.id, { ...expired, transactions: [sent!, sent!] });
    expect(twice.payment.attentionResolvedAt).not.toBeNull();
    expect(await attentionEvents(payment.id)).toEqual(["late_payment"]);
    // As many transactions as stored, one of them new (the old one no longer listed): new money.
    const replaced = await read(payment.id, { ...expired, transactions: [{ ...sent!, tx_hash: `${sent!.tx_hash.slice(0, -4)}beef` }] });
    expect(replaced.payment).toMatchObject({ attention: "late_payment", attentionResolvedAt: null });
    expect(await attentionEvents(payment.id)).toEqual(["late_payment", "late_payment"]);
  });

  it("an expired order without crypto rejects the payment with no flag", async () => {
    const id = randomUUID();
    const payment = await createPayment(rows, { gatewayOrderId: id, gatewayStatus: "PE" });
    expect((await read(payment.id, order(id, "EX", 0, "2026-11-24T10:00:00Z"))).payment).toMatchObject({ state: "failed", attention: null });
  });

  it("the read verifying a signed underpaid (IA) webhook keeps its flag: the transaction it lists is not a late payment", async () => {
    const id = randomUUID();
    const payment = await createPayment(rows, {
      gatewayOrderId: id,
      state: "failed",
      gatewayStatus: "IA",
      unverifiedSince: new Date(),
      attention: "underpaid",
      attentionDetail: "underpaid",
      attentionResolvedAt: new Date(),
    });
    const settled = await read(payment.id, order(id, "IA", 1, "2026-11-24T10:00:00Z"));
    expect(settled.payment).toMatchObject({ state: "failed", attention: "underpaid", unverifiedSince: null });
    expect(settled.payment.attentionResolvedAt).not.toBeNull();
    expect(await attentionEvents(payment.id)).toEqual([]);
  });

  it("the read verifying a signed FA webhook raises no flag: the failed transaction it lists is no money, as on a first read", async () => {
    const id = randomUUID();
    // Settled on the signed webhook alone: no read stored the order's transactions.
    const payment = await createPayment(rows, { gatewayOrderId: id, state: "failed", gatewayStatus: "FA", unverifiedSince: new Date() });
    const settled = await read(payment.id, order(id, "FA", 1, "2026-11-24T10:00:00Z"));
    expect(settled.payment).toMatchObject({ state: "failed", attention: null, unverifiedSince: null });
    expect(await attentionEvents(payment.id)).toEqual([]);
    // The same order read first, with no webhook before it: the same outcome.
    const first = randomUUID();
    const open = await createPayment(rows, { gatewayOrderId: first, gatewayStatus: "PE" });
    expect((await read(open.id, order(first, "FA", 1, "2026-11-24T10:00:00Z"))).payment).toMatchObject({ state: "failed", attention: null });
  });

  it("the read verifying a signed EX webhook of an order holding crypto says the ended order holds it, as on a first read, not that it arrived after the rejection", async () => {
    const id = randomUUID();
    const payment = await createPayment(rows, { gatewayOrderId: id, state: "failed", gatewayStatus: "EX", unverifiedSince: new Date() });
    const settled = await read(payment.id, order(id, "EX", 1, "2026-11-24T10:00:00Z"));
    expect(settled.payment).toMatchObject({ state: "failed", attention: "late_payment", unverifiedSince: null });
    expect(settled.payment.attentionDetail).toBe("The gateway order ended unpaid (status EX) holding crypto the shopper sent. Refund it from the gateway dashboard or arrange the order with the shopper.");
    // Once verified, a transaction the next read lists beyond those stored is new: late.
    expect(await markAttentionHandled(rows.db, rows.shopId, payment.id, await currentFlag(rows.db, settled.payment), new Date())).toBe("handled");
    const later = await read(payment.id, order(id, "EX", 2, "2026-11-24T11:00:00Z"));
    expect(later.payment).toMatchObject({ attention: "late_payment", attentionResolvedAt: null });
    expect(later.payment.attentionDetail).toContain("Crypto arrived after the payment was rejected (gateway status EX)");
    expect(await attentionEvents(payment.id)).toEqual(["late_payment", "late_payment"]);
  });

  it("the read verifying a signed DE webhook whose own late-payment flag was handled does not raise it again: the shopper was refunded once", async () => {
    const id = randomUUID();
    // The signed DE webhook rejected the payment while the order showed money (AC), and flagged it.
    const payment = await createPayment(rows, {
      gatewayOrderId: id,
      state: "failed",
      gatewayStatus: "DE",
      unverifiedSince: new Date(),
      attention: "late_payment",
      attentionDetail: "The gateway order ended unpaid (status DE) holding crypto the shopper sent. Refund it from the gateway dashboard or arrange the order with the shopper.",
      attentionResolvedAt: new Date(),
    });
    const settled = await read(payment.id, order(id, "DE", 1, "2026-11-24T10:00:00Z"));
    expect(settled.payment).toMatchObject({ state: "failed", attention: "late_payment", unverifiedSince: null });
    expect(settled.payment.attentionResolvedAt).not.toBeNull();
    expect(await attentionEvents(payment.id)).toEqual([]);
  });

  it("a paid payment whose order the gateway then shows ended unpaid (a signed completion it contradicted, its flag handled) is flagged: Shopify shows it paid", async () => {
    const id = randomUUID();
    // Paid on a signed CO webhook; the listing since showed the order AC (flagged, and handled).
    const payment = await createPayment(rows, {
      gatewayOrderId: id,
      state: "paid",
      gatewayStatus: "AC",
      attention: "webhook_mismatch",
      attentionDetail: "A signed gateway webhook reported status CO, but the gateway's order now shows AC.",
      attentionResolvedAt: new Date(),
    });
    const settled = await read(payment.id, order(id, "FA", 1, "2026-11-24T10:00:00Z"));
    expect(settled.payment).toMatchObject({ state: "paid", gatewayStatus: "FA", attention: "webhook_mismatch", attentionResolvedAt: null });
    expect(settled.payment.attentionDetail).toContain("now shows FA");
    expect(await attentionEvents(payment.id)).toEqual(["webhook_mismatch"]);
    // Read again, the same status is no news: flagged once.
    await rows.db.payment.update({ where: { id: payment.id }, data: { attentionResolvedAt: new Date() } });
    await read(payment.id, order(id, "FA", 1, "2026-11-24T10:00:00Z"));
    expect(await attentionEvents(payment.id)).toEqual(["webhook_mismatch"]);
  });

  it("an unknown status is flagged once: a person's handling of it is not undone by the next read", async () => {
    const id = randomUUID();
    const payment = await createPayment(rows, { gatewayOrderId: id, gatewayStatus: "PE" });
    await read(payment.id, order(id, "ZZ", 0, "2026-11-24T10:00:00Z"));
    await rows.db.payment.update({ where: { id: payment.id }, data: { attentionResolvedAt: new Date() } });
    const again = await read(payment.id, order(id, "ZZ", 0, "2026-11-24T10:05:00Z"));
    expect(again.payment.attention).toBe("unknown_status");
    expect(again.payment.attentionResolvedAt).not.toBeNull();
    expect(await attentionEvents(payment.id)).toEqual(["unknown_status"]);
  });
  const events = async (paymentId: string) => (await rows.db.paymentEvent.findMany({ where: { paymentId } })).map((e) => e.type);

  it("a read that completes a payment with more than its amount resolves it and flags the overpayment, once for the amounts shown", async () => {
    const id = randomUUID();
    const payment = await createPayment(rows, { gatewayOrderId: id, gatewayStatus: "AC" });
    // Two transactions of 0.00245 BTC for the 0.00245 BTC asked.
    const settled = await read(payment.id, order(id, "CO", 2, "2026-11-24T10:00:00Z"));
    expect(settled.decision.kind).toBe("resolve");
    expect(settled.payment).toMatchObject({ state: "paid", attention: "overpaid", attentionResolvedAt: null });
    expect(settled.payment.attentionDetail).toContain("0.0049 BTC arrived for the 0.00245 BTC asked: 0.00245 BTC more than was due.");
    expect(settled.payment.attentionDetail).toContain("A refund from the gateway dashboard returns the full amount, not the extra alone");
    expect(settled.finalMessage).not.toBeNull();

    // Read again, and after the merchant handled it: not flagged again for the same amounts.
    await read(payment.id, order(id, "CO", 2, "2026-11-24T10:00:00Z"));
    await rows.db.payment.update({ where: { id: payment.id }, data: { attentionResolvedAt: new Date() } });
    const again = await read(payment.id, order(id, "CO", 2, "2026-11-24T10:00:00Z"));
    expect(again.payment.attentionResolvedAt).not.toBeNull();
    expect(await attentionEvents(payment.id)).toEqual(["overpaid"]);

    // More arrives on the completed order: flagged anew, with the new amounts.
    const more = await read(payment.id, order(id, "CO", 3, "2026-11-24T10:05:00Z"));
    expect(more.payment).toMatchObject({ attention: "overpaid", attentionResolvedAt: null });
    expect(more.payment.attentionDetail).toContain("0.0049 BTC more than was due");
    expect(await attentionEvents(payment.id)).toEqual(["overpaid", "overpaid"]);
  });

  it("an order completed with exactly its amount is paid with no flag", async () => {
    const id = randomUUID();
    const payment = await createPayment(rows, { gatewayOrderId: id, gatewayStatus: "AC" });
    expect((await read(payment.id, order(id, "CO", 1, "2026-11-24T10:00:00Z"))).payment).toMatchObject({ state: "paid", attention: null });
  });

  it("the read verifying a signed completion webhook flags the overpayment it shows, and still verifies the webhook", async () => {
    const id = randomUUID();
    const payment = await createPayment(rows, { gatewayOrderId: id, state: "paid", gatewayStatus: "CO", unverifiedSince: new Date() });
    const settled = await read(payment.id, order(id, "CO", 2, "2026-11-24T10:00:00Z"));
    expect(settled.payment).toMatchObject({ state: "paid", attention: "overpaid", unverifiedSince: null });
    expect(await events(payment.id)).toEqual(expect.arrayContaining(["verified", "attention"]));
  });

  it("an overpayment does not take the place of another flag still open", async () => {
    const id = randomUUID();
    const payment = await createPayment(rows, { gatewayOrderId: id, state: "paid", gatewayStatus: "CO", attention: "shopify_error", attentionDetail: "Shopify refused the call." });
    const settled = await read(payment.id, order(id, "CO", 2, "2026-11-24T10:00:00Z"));
    expect(settled.payment).toMatchObject({ attention: "shopify_error", attentionDetail: "Shopify refused the call.", attentionResolvedAt: null });
    expect(await attentionEvents(payment.id)).toEqual([]);
  });

  it("a completion with more than the amount after the payment was rejected is a late payment, not an overpayment", async () => {
    const id = randomUUID();
    const payment = await createPayment(rows, { gatewayOrderId: id, state: "failed", gatewayStatus: "EX" });
    expect((await read(payment.id, order(id, "CO", 2, "2026-11-24T10:00:00Z"))).payment).toMatchObject({ state: "failed", attention: "late_payment" });
  });

  it("an order seen holding crypto (AC) when Shopify's window closed, that the gateway completes later, is flagged a late payment once: the money is now the merchant's to return", async () => {
    const id = randomUUID();
    const payment = await createPayment(rows, { gatewayOrderId: id, gatewayStatus: "PE" });
    expect((await read(payment.id, order(id, "AC", 1, "2026-11-24T10:00:00Z"))).payment.state).toBe("confirming");
    // Shopify's window closes with the order still AC: rejected and flagged, and the merchant marks the flag handled.
    await rows.db.payment.update({
      where: { id: payment.id },
      data: { state: "failed", attention: "pending_window_expired", attentionDetail: "window closed", attentionResolvedAt: new Date() },
    });
    // The gateway completes the order, on the transaction it already listed.
    const completed = await read(payment.id, order(id, "CO", 1, "2026-11-24T11:00:00Z"));
    expect(completed.payment).toMatchObject({ state: "failed", attention: "late_payment", attentionResolvedAt: null });
    expect(completed.payment.attentionDetail).toContain("CO");
    // The same completion read again ("Check now"), before and after the flag is handled, is not news.
    await read(payment.id, order(id, "CO", 1, "2026-11-24T11:00:00Z"));
    await rows.db.payment.update({ where: { id: payment.id }, data: { attentionResolvedAt: new Date() } });
    expect((await read(payment.id, order(id, "CO", 1, "2026-11-24T11:00:00Z"))).payment.attentionResolvedAt).not.toBeNull();
    expect(await attentionEvents(payment.id)).toEqual(["late_payment"]);
  });

  it("crypto that arrived after the rejection, flagged and handled, is not flagged again when the gateway completes the order on it", async () => {
    const id = randomUUID();
    const payment = await createPayment(rows, { gatewayOrderId: id, state: "failed", gatewayStatus: "PE" });
    expect((await read(payment.id, order(id, "AC", 1, "2026-11-24T10:00:00Z"))).payment).toMatchObject({ attention: "late_payment", attentionResolvedAt: null });
    await rows.db.payment.update({ where: { id: payment.id }, data: { attentionResolvedAt: new Date() } });
    expect((await read(payment.id, order(id, "CO", 1, "2026-11-24T11:00:00Z"))).payment.attentionResolvedAt).not.toBeNull();
    expect(await attentionEvents(payment.id)).toEqual(["late_payment"]);
  });

  it("a completion after the window closed on an AC order takes the place of the window's flag still open, and is not raised over an open late payment", async () => {
    const id = randomUUID();
    const payment = await createPayment(rows, { gatewayOrderId: id, gatewayStatus: "PE" });
    await read(payment.id, order(id, "AC", 1, "2026-11-24T10:00:00Z"));
    await rows.db.payment.update({ where: { id: payment.id }, data: { state: "failed", attention: "pending_window_expired", attentionDetail: "window closed" } });
    expect((await read(payment.id, order(id, "CO", 1, "2026-11-24T11:00:00Z"))).payment).toMatchObject({ attention: "late_payment", attentionResolvedAt: null });

    const other = randomUUID();
    const flagged = await createPayment(rows, { gatewayOrderId: other, gatewayStatus: "PE" });
    await read(flagged.id, order(other, "AC", 1, "2026-11-24T10:00:00Z"));
    await rows.db.payment.update({ where: { id: flagged.id }, data: { state: "failed", attention: "late_payment", attentionDetail: "already said" } });
    expect((await read(flagged.id, order(other, "CO", 1, "2026-11-24T11:00:00Z"))).payment).toMatchObject({ attention: "late_payment", attentionDetail: "already said" });
    expect(await attentionEvents(flagged.id)).toEqual([]);
  });

  it("crypto paid after an accepted void is flagged once, when it first shows: handled, and followed by an overpayment's flag, it is not raised again by the next read", async () => {
    const id = randomUUID();
    const payment = await createPayment(rows, { kind: "authorization", gatewayOrderId: id, gatewayStatus: "PE" });
    await rows.db.sessionRequest.create({
      data: { shopId: rows.shopId, kind: "void", shopifyId: randomUUID(), gid: `gid://shopify/VoidSession/${randomUUID()}`, paymentShopifyId: payment.shopifyPaymentId, amount: "0", currency: "", status: "resolved" },
    });
    const handle = async () => {
      const row = await rows.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
      expect(await markAttentionHandled(rows.db, rows.shopId, payment.id, await currentFlag(rows.db, row), new Date())).toBe("handled");
    };
    expect((await read(payment.id, order(id, "AC", 1, "2026-11-25T10:00:00Z"))).payment.attention).toBe("paid_after_void");
    await handle();
    // Twice the amount arrived: the overpayment is news.
    expect((await read(payment.id, order(id, "CO", 2, "2026-11-25T10:05:00Z"))).payment.attention).toBe("overpaid");
    // The same order read again ("Check now").
    expect((await read(payment.id, order(id, "CO", 2, "2026-11-25T10:05:00Z"))).payment.attention).toBe("overpaid");
    expect(await attentionEvents(payment.id)).toEqual(["paid_after_void", "overpaid"]);
  });
});
