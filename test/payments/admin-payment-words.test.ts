// What the merchant admin says about money and a payment's state: a refund's advice never sends
// the merchant to refund more than was asked, a payment ended at the gateway and waiting for
// Shopify is not said to wait for the gateway, and the list and home page show what the
// payment's own page shows (not paid in Shopify, needs attention).
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Prisma } from "../../generated/prisma/sqlite/client";
import { getAdminPage, pageText } from "../support/admin-pages";
import { paymentColumns } from "../support/payment-rows";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
// The stack checks its log for secrets when it closes: these pages alone may write no line.
beforeAll(() => stack().logger.info("admin payment words: started"));

const db = () => stack().services.db;

async function makePayment(columns: Partial<Prisma.PaymentUncheckedCreateInput> = {}) {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  return db().payment.create({ data: paymentColumns(shop.id, columns) });
}

describe("a payment's timeline after a refund asked in Shopify", () => {
  it("does not tell the merchant to refund a partial refund from the gateway dashboard (which refunds the whole order)", async () => {
    const payment = await makePayment({
      state: "paid",
      gatewayOrderId: randomUUID(),
      gatewayStatus: "CO",
      percentage: "100.0",
      shopifyOutcome: "resolved",
      amount: "100.00",
      currency: "EUR",
    });
    // What follow-up-sessions records for a refund of 10.00 of a 100.00 EUR payment.
    await db().paymentEvent.create({
      data: { paymentId: payment.id, type: "refund_requested", detail: JSON.stringify({ amount: "10.00", currency: "EUR", answer: "refund.reject", queued: true }), at: new Date() },
    });
    const page = await getAdminPage(stack(), `/app/payments/${payment.id}`);
    expect(page.status).toBe(200);
    const timeline = page.text.slice(page.text.indexOf("Timeline"));
    expect(timeline).toContain("A refund of 10.00 EUR was asked.");
    // The gateway's dashboard refunds only in full (a voucher for the whole 100.00 EUR): for a
    // part, the app's own answer to Shopify says to return that part another way.
    expect(timeline).not.toContain("refund it from the gateway dashboard");
  });
});

describe("a payment's Shopify side", () => {
  it("does not say a payment the gateway completed is waiting for the gateway while its outcome is queued for Shopify", async () => {
    // The shopper came back before the end (Shopify was told pending), the gateway then completed
    // the order: the resolve is queued (or retried during a Shopify outage).
    const payment = await makePayment({
      state: "paid",
      gatewayOrderId: randomUUID(),
      gatewayStatus: "CO",
      percentage: "100.0",
      shopifyOutcome: "pending",
    });
    const page = await getAdminPage(stack(), `/app/payments/${payment.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("The gateway confirmed the payment.");
    expect(page.text).not.toContain("Waiting for the gateway");
  });
});

describe("the payment list and the home page", () => {
  it("the list does not show a green 'Paid' alone for a payment Shopify was told is not paid (paid twice)", async () => {
    const groupId = `group-${randomUUID()}`;
    await makePayment({ groupId, state: "paid", gatewayOrderId: randomUUID(), gatewayStatus: "CO", percentage: "100.0", shopifyOutcome: "resolved", amount: "30.00", currency: "EUR" });
    const second = await makePayment({
      groupId,
      state: "paid",
      gatewayOrderId: randomUUID(),
      gatewayStatus: "CO",
      percentage: "100.0",
      shopifyOutcome: "rejected",
      amount: "30.00",
      currency: "EUR",
      attention: "paid_twice",
      attentionDetail: "Another crypto payment of this checkout was already accepted, so the shopper paid twice: refund this payment's crypto from the gateway dashboard.",
      attentionResolvedAt: new Date(),
    });
    const detail = await getAdminPage(stack(), `/app/payments/${second.id}`);
    expect(detail.text).toContain("Not paid in Shopify");

    const list = await getAdminPage(stack(), "/app/payments");
    const row = pageText(list.html.split("<tr").find((r) => r.includes(second.shopifyPaymentId)) ?? "");
    expect(row).toContain("Paid");
    // The payment's own page says Shopify has it as not paid; the list must not say only "Paid".
    expect(row).toMatch(/not paid in shopify/i);
    // Nor are the week's figures: it is counted apart from the paid ones.
    const home = await getAdminPage(stack(), "/app");
    expect(home.text).toContain("Paid, not paid in Shopify (test): 1");
  });

  it("the home page's latest payments mark a payment that needs attention, as the payment list does", async () => {
    const flagged = await makePayment({
      state: "paid",
      gatewayOrderId: randomUUID(),
      gatewayStatus: "CO",
      percentage: "100.0",
      shopifyOutcome: "resolved",
      amount: "55.00",
      currency: "EUR",
      attention: "webhook_mismatch",
      attentionDetail: "A signed gateway webhook reported status CO, but the gateway's order now shows EX.",
      createdAt: new Date(Date.now() + 3_600_000),
    });
    const list = await getAdminPage(stack(), "/app/payments");
    const row = pageText(list.html.split("<tr").find((r) => r.includes(flagged.shopifyPaymentId)) ?? "");
    expect(row).toContain("Needs attention");

    const home = await getAdminPage(stack(), "/app");
    expect(home.status).toBe(200);
    const latest = home.text.slice(home.text.indexOf("Latest payments"));
    // The payment's entry: its amount, badges and gateway status, up to its time.
    const start = latest.indexOf("55.00 EUR");
    const entry = latest.slice(start, latest.indexOf(" UTC", start));
    expect(entry).toContain("55.00 EUR");
    expect(entry).toContain("Needs attention");
  });
});
