// What a payment's page tells the merchant where its cards could contradict each other: an order
// that ended unpaid yet holds crypto sent late (the gateway keeps its EX or CA status), a payment
// whose crypto waits for confirmation before Shopify was told anything, and a payment Shopify
// shows paid while a flag says not to ship.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Prisma } from "../../generated/prisma/sqlite/client";
import { getAdminPage } from "../support/admin-pages";
import { paymentColumns } from "../support/payment-rows";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
// The stack checks its log for secrets and wants a line to check.
beforeAll(() => stack().logger.info("admin payment detail words: started"));

const db = () => stack().services.db;

async function makePayment(columns: Partial<Prisma.PaymentUncheckedCreateInput> = {}) {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  return db().payment.create({ data: paymentColumns(shop.id, columns) });
}

const between = (text: string, from: string, to: string) => text.slice(text.indexOf(from), text.indexOf(to, text.indexOf(from)));

describe("an order that ended unpaid and received crypto late", () => {
  it.each(["EX", "CA"])("at status %s, the gateway card says it holds the shopper's crypto, not that nothing was received", async (status) => {
    const payment = await makePayment({
      state: "failed",
      shopifyOutcome: "rejected",
      gatewayOrderId: randomUUID(),
      gatewayStatus: status,
      inputCurrency: "BTC",
      cryptoAmount: "0.00081234",
      percentage: "100.0",
      receivedAmount: "49.90",
      attention: "late_payment",
      attentionDetail: `Crypto arrived after the payment was rejected (gateway status ${status}).`,
      // Handled already: no banner is left to say otherwise.
      attentionResolvedAt: new Date(),
    });
    await db().paymentTransaction.create({ data: { paymentId: payment.id, txHash: `0x${randomUUID().replace(/-/g, "")}`, currency: "BTC", amount: "0.00081234", confirmed: true, block: 870_000n, seenAt: new Date() } });

    const page = await getAdminPage(stack(), `/app/payments/${payment.id}`);
    expect(page.status).toBe(200);
    const gatewayCard = between(page.text, "Check now", "Gateway order");
    expect(gatewayCard).toContain("Received 49.90 EUR");
    expect(gatewayCard).toContain("holds crypto the shopper sent");
    expect(gatewayCard).not.toContain("Nothing received");
    expect(gatewayCard).not.toContain("Unpaid for more than 24 hours");
  });

  it("an expired order with nothing received keeps the status's own meaning", async () => {
    const payment = await makePayment({ state: "failed", shopifyOutcome: "rejected", gatewayOrderId: randomUUID(), gatewayStatus: "EX", percentage: "0" });
    const page = await getAdminPage(stack(), `/app/payments/${payment.id}`);
    expect(between(page.text, "Check now", "Gateway order")).toContain("Nothing received within the 15-60 minute window.");
  });
});

describe("a confirming payment Shopify was not told of yet", () => {
  it("says the crypto waits for confirmation, not that the shopper has not finished paying", async () => {
    const payment = await makePayment({
      state: "confirming",
      gatewayOrderId: randomUUID(),
      gatewayStatus: "AC",
      inputCurrency: "ETH",
      cryptoAmount: "0.0158",
      percentage: "100.0",
      receivedAmount: "49.90",
    });
    await db().paymentTransaction.create({ data: { paymentId: payment.id, txHash: `0x${randomUUID().replace(/-/g, "")}`, currency: "ETH", amount: "0.0158", confirmed: false, seenAt: new Date() } });

    const page = await getAdminPage(stack(), `/app/payments/${payment.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("Crypto was received and is waiting for network confirmation.");
    const shopifyCard = between(page.text, "Shopify not told yet", "Timeline");
    expect(shopifyCard).toContain("waits for network confirmation");
    expect(shopifyCard).not.toContain("The shopper has not finished paying yet.");
  });
});

describe("a payment paid in Shopify", () => {
  it("with an open flag, the next action points to the flag instead of saying there is nothing to do", async () => {
    const payment = await makePayment({
      state: "paid",
      shopifyOutcome: "resolved",
      gatewayOrderId: randomUUID(),
      gatewayStatus: "CO",
      attention: "webhook_mismatch",
      attentionDetail: "A signed gateway webhook reported status CO, but the gateway's order now shows EX.",
    });
    const page = await getAdminPage(stack(), `/app/payments/${payment.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("Needs attention: Gateway record disagrees with its webhook");
    const nextAction = between(page.text, "Next action", "Amount");
    expect(nextAction).toContain("needs attention");
    expect(nextAction).not.toMatch(/Nothing to do/);
  });

  it("once the flag is handled, there is nothing to do", async () => {
    const payment = await makePayment({
      state: "paid",
      shopifyOutcome: "resolved",
      gatewayOrderId: randomUUID(),
      gatewayStatus: "CO",
      attention: "overpaid",
      attentionDetail: "The shopper sent more than asked.",
      attentionResolvedAt: new Date(),
    });
    const page = await getAdminPage(stack(), `/app/payments/${payment.id}`);
    expect(between(page.text, "Next action", "Amount")).toContain("Nothing to do: Shopify shows the order as paid.");
  });
});

describe("a signed notification newer than the order's last read", () => {
  async function notification(payment: { shopId: string; gatewayOrderId: string | null }, status: string, receivedAt: Date, rawBody?: string) {
    await db().gatewayWebhook.create({
      data: {
        shopId: payment.shopId,
        gatewayEnv: "sandbox",
        nonce: String(Math.floor(receivedAt.getTime() / 1000)),
        signature: randomUUID().replace(/-/g, ""),
        rawBody: rawBody ?? JSON.stringify({ identifier: payment.gatewayOrderId, status }),
        orderId: payment.gatewayOrderId,
        status,
        receivedAt,
        processedAt: receivedAt,
      },
    });
  }
  const gatewayCard = (text: string) => between(text, "Check now", "Gateway order");

  it("an AC notification noted without a read (it needs nothing from Shopify) is shown beside the figures of the last read", async () => {
    const created = new Date(Date.now() - 10 * 60_000);
    const payment = await makePayment({ state: "awaiting_payment", gatewayOrderId: randomUUID(), gatewayStatus: "NR", createdAt: created });
    // As the gateway writes it (Python's spacing and number forms), so its amounts are shown as written.
    const body = `{"fiat_amount": 49.9, "status": "AC", "crypto_amount": 0.00081234, "unconfirmed_amount": 0.00081234, "confirmed_amount": 0.0, "currency": "BTC", "identifier": "${payment.gatewayOrderId}"}`;
    await notification(payment, "AC", new Date(created.getTime() + 5 * 60_000), body);
    const page = await getAdminPage(stack(), `/app/payments/${payment.id}`);
    expect(gatewayCard(page.text)).toMatch(/A signed notification of .+ reports Awaiting Completion \(AC\), in BTC: 0\.00081234 BTC asked, 0\.0 confirmed, 0\.00081234 unconfirmed\./);
    expect(gatewayCard(page.text)).toContain("Check now reads the order at once");
    // The state's words are those of the last read, and say so: the notification reports crypto received.
    expect(page.text).toContain("As of the order's last read: the gateway order exists; nothing has been received yet.");
  });

  it("a paid payment a CO notification settled without a read says its figures are not read yet", async () => {
    const created = new Date(Date.now() - 10 * 60_000);
    const at = new Date(created.getTime() + 5 * 60_000);
    const payment = await makePayment({ state: "paid", shopifyOutcome: "resolved", gatewayOrderId: randomUUID(), gatewayStatus: "CO", createdAt: created, unverifiedSince: at });
    await notification(payment, "CO", at);
    const page = await getAdminPage(stack(), `/app/payments/${payment.id}`);
    expect(gatewayCard(page.text)).toMatch(/reports Completed \(CO\)/);
    // Its state is the notification's own.
    expect(page.text).not.toContain("As of the order's last read");
  });

  it("once the order was read after it, the notification is not mentioned", async () => {
    const created = new Date(Date.now() - 10 * 60_000);
    const payment = await makePayment({
      state: "confirming",
      gatewayOrderId: randomUUID(),
      gatewayStatus: "AC",
      inputCurrency: "BTC",
      cryptoAmount: "0.0008",
      createdAt: created,
      lastCheckedAt: new Date(created.getTime() + 6 * 60_000),
    });
    await notification(payment, "AC", new Date(created.getTime() + 5 * 60_000));
    const page = await getAdminPage(stack(), `/app/payments/${payment.id}`);
    expect(gatewayCard(page.text)).not.toContain("A signed notification");
  });
  describe("in the payments list", () => {
    const listRow = async (payment: { shopifyPaymentId: string }) => {
      const page = await getAdminPage(stack(), `/app/payments?q=${encodeURIComponent(payment.shopifyPaymentId)}`);
      expect(page.status).toBe(200);
      expect(page.text).toContain(payment.shopifyPaymentId);
      return page.text.slice(page.text.indexOf(payment.shopifyPaymentId));
    };

    it("a row whose newest notification reports another status than the last read says what it reported", async () => {
      const created = new Date(Date.now() - 10 * 60_000);
      const payment = await makePayment({ state: "awaiting_payment", gatewayOrderId: randomUUID(), gatewayStatus: "NR", createdAt: created });
      // Stored out of order: the newest by its time of receipt counts, not the last stored.
      await notification(payment, "AC", new Date(created.getTime() + 5 * 60_000));
      await notification(payment, "PE", new Date(created.getTime() + 2 * 60_000));
      const row = await listRow(payment);
      expect(row).toContain("Not Ready");
      expect(row).toContain("Notified since: Awaiting Completion (AC)");
      expect(row).not.toContain("Pending (PE)");
    });

    it("a row read after its notification, or settled from one of its own status, says nothing more", async () => {
      const created = new Date(Date.now() - 10 * 60_000);
      const read = await makePayment({ state: "confirming", gatewayOrderId: randomUUID(), gatewayStatus: "AC", createdAt: created, lastCheckedAt: new Date(created.getTime() + 6 * 60_000) });
      await notification(read, "AC", new Date(created.getTime() + 5 * 60_000));
      expect(await listRow(read)).not.toContain("Notified since");

      const at = new Date(created.getTime() + 5 * 60_000);
      const settled = await makePayment({ state: "paid", shopifyOutcome: "resolved", gatewayOrderId: randomUUID(), gatewayStatus: "CO", createdAt: created, unverifiedSince: at });
      await notification(settled, "CO", at);
      expect(await listRow(settled)).not.toContain("Notified since");
    });

    it("a notification of another gateway environment's order of the same identifier is not this payment's", async () => {
      const created = new Date(Date.now() - 10 * 60_000);
      const payment = await makePayment({ state: "awaiting_payment", gatewayOrderId: randomUUID(), gatewayStatus: "NR", createdAt: created, gatewayEnv: "live" });
      await notification(payment, "AC", new Date(created.getTime() + 5 * 60_000));
      expect(await listRow(payment)).not.toContain("Notified since");
    });
  });
});

describe("a payment this shop does not have", () => {
  it.each(["does-not-exist", "bad%20id!"])("/app/payments/%s answers 404 inside the admin, with the way back to the list", async (id) => {
    const page = await getAdminPage(stack(), `/app/payments/${id}`);
    expect(page.status).toBe(404);
    expect(page.text).toContain("Payment not found");
    expect(page.text).toContain("No such payment in this shop.");
    // The admin's own navigation is still there.
    expect(page.html).toContain('href="/app/payments');
  });
});
