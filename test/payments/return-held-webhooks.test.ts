// A shopper sent back from the gateway's page while the payment still shows its order as
// created (NR) and the order cannot be read here (this instance cannot open the shop's
// gateway credentials: a key ring without the key that sealed them). The order's signed
// webhooks the app holds decide, whatever the inbox has made of them yet: a payment they show
// made is told pending to Shopify, never sent to choose another payment method (the shopper
// would pay twice); one they show ended unpaid is; one they cannot tell waits on a page that
// checks again. The same holds for a shopper the gateway sends back through its "ko" link
// (given up, the order expired): one whose money the webhooks show is told pending. On SQLite
// and PostgreSQL.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../app/lib/logger.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { handleShopperReturn, type ReturnOutcome } from "../../app/payments/handle-return";
import { CredentialDecryptionError } from "../../app/shops/credential-cipher.server";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

const SHOP = "return-held-webhooks.myshopify.com";

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: "return-held-webhooks-hook-01" });
  let opened: OpenedRows;
  beforeAll(() => void (opened = rows()));

  const clock = { now: () => new Date() };
  const deps = (): PaymentsDeps =>
    ({
      db: opened.db,
      sql: opened.sql,
      clock,
      logger: silentLogger,
      gateways: {
        forShop: () => {
          throw new CredentialDecryptionError("stored credential cannot be decrypted with the configured keys");
        },
        retiredFor: () => null,
        currencies: async () => null,
      },
      shopify: { forShop: async () => null },
      links: { verify: () => true, returnUrl: () => "", paymentPageUrl: () => "" },
    }) as unknown as PaymentsDeps;

  async function storeWebhook(orderId: string, status: string) {
    const body = `{"fiat_amount": 49.9, "status": "${status}", "identifier": "${orderId}", "fiat_currency": "EUR", "safe": true}`;
    await opened.db.gatewayWebhook.create({
      data: { shopId: opened.shopId, gatewayEnv: "sandbox", nonce: "1", signature: randomUUID(), rawBody: body, orderId, status, receivedAt: new Date() },
    });
  }

  const pendingCalls = (paymentId: string) => opened.db.outboxMessage.findMany({ where: { paymentId, kind: "payment.pending" } });
  const abandonedEvents = (paymentId: string) => opened.db.paymentEvent.count({ where: { paymentId, type: "shopper_abandoned" } });

  it.each<[string, string[], ReturnOutcome]>([
    ["as paid, with its PE, AC and CO webhooks", ["PE", "AC", "CO"], "ok"],
    ["as paid, with its CO webhook alone (the PE and AC were lost)", ["CO"], "ok"],
    ["as paid, with a CM webhook (completed by the merchant)", ["PE", "CM"], "ok"],
    ["through the gateway's ko link, with its AC webhook (money seen, not yet confirmed)", ["PE", "AC"], "ko"],
    ["through the gateway's ko link, with its CO webhook", ["PE", "AC", "CO"], "ko"],
  ])("a shopper sent back %s held is told pending, not sent to choose again", async (_what, statuses, outcome) => {
    const orderId = randomUUID();
    const payment = await createPayment(opened, { gatewayOrderId: orderId, gatewayStatus: "NR", state: "awaiting_payment" });
    for (const status of statuses) await storeWebhook(orderId, status);

    const result = await handleShopperReturn(deps(), { paymentId: payment.id, signature: "x", outcome });
    expect(result).not.toEqual({ kind: "redirect", url: payment.cancelUrl });
    expect(await abandonedEvents(payment.id)).toBe(0);
    const pending = await pendingCalls(payment.id);
    expect(pending.map((call) => (JSON.parse(call.payload) as { reason: string }).reason)).toEqual(["NETWORK_ACTION_REQUIRED"]);
  });

  it("a shopper sent back with the order's expiry held (EX) chooses again: nothing was paid", async () => {
    const orderId = randomUUID();
    const payment = await createPayment(opened, { gatewayOrderId: orderId, gatewayStatus: "NR", state: "awaiting_payment" });
    for (const status of ["PE", "EX"]) await storeWebhook(orderId, status);

    const result = await handleShopperReturn(deps(), { paymentId: payment.id, signature: "x", outcome: "standby" });
    expect(result).toEqual({ kind: "redirect", url: payment.cancelUrl });
    expect(await abandonedEvents(payment.id)).toBe(1);
    expect(await pendingCalls(payment.id)).toEqual([]);
  });

  it("with every outcome confirmed by a read first (the shop's setting), a held expiry leaves the shopper on a page that checks again", async () => {
    await opened.db.shop.update({ where: { id: opened.shopId }, data: { readOrderOnWebhook: true } });
    try {
      const orderId = randomUUID();
      const payment = await createPayment(opened, { gatewayOrderId: orderId, gatewayStatus: "NR", state: "awaiting_payment" });
      for (const status of ["PE", "EX"]) await storeWebhook(orderId, status);
      const result = await handleShopperReturn(deps(), { paymentId: payment.id, signature: "x", outcome: "standby" });
      expect(result).toMatchObject({ kind: "wait" });
      expect(await abandonedEvents(payment.id)).toBe(0);
    } finally {
      await opened.db.shop.update({ where: { id: opened.shopId }, data: { readOrderOnWebhook: false } });
    }
  });

  it("a webhook the app cannot take at its word (another amount) leaves the shopper on a page that checks again", async () => {
    const orderId = randomUUID();
    const payment = await createPayment(opened, { gatewayOrderId: orderId, gatewayStatus: "NR", state: "awaiting_payment" });
    await opened.db.gatewayWebhook.create({
      data: {
        shopId: opened.shopId,
        gatewayEnv: "sandbox",
        nonce: "1",
        signature: randomUUID(),
        rawBody: `{"fiat_amount": 1.0, "status": "CO", "identifier": "${orderId}", "fiat_currency": "EUR"}`,
        orderId,
        status: "CO",
        receivedAt: new Date(),
      },
    });

    const result = await handleShopperReturn(deps(), { paymentId: payment.id, signature: "x", outcome: "ok" });
    expect(result).toMatchObject({ kind: "wait" });
    expect(await abandonedEvents(payment.id)).toBe(0);
    expect(await pendingCalls(payment.id)).toEqual([]);
  });

  it.each([
    ["only a coin chosen (PE)", ["PE"]],
    ["nothing", []],
  ])("a shopper sent back through the ko link with %s held chooses again", async (_what, statuses) => {
    const orderId = randomUUID();
    const payment = await createPayment(opened, { gatewayOrderId: orderId, gatewayStatus: "PE", state: "awaiting_payment" });
    for (const status of statuses) await storeWebhook(orderId, status);

    const result = await handleShopperReturn(deps(), { paymentId: payment.id, signature: "x", outcome: "ko" });
    expect(result).toEqual({ kind: "redirect", url: payment.cancelUrl });
    expect(await abandonedEvents(payment.id)).toBe(1);
    expect(await pendingCalls(payment.id)).toEqual([]);
  });

  it("with nothing held and nothing readable (no credentials to read with), a shopper the gateway sent back as paid, or to wait, waits: the gateway sends there only after seeing money", async () => {
    const payment = await createPayment(opened, { gatewayOrderId: randomUUID(), gatewayStatus: "NR", state: "awaiting_payment" });
    for (const outcome of ["ok", "standby"] as const) {
      expect(await handleShopperReturn(deps(), { paymentId: payment.id, signature: "x", outcome })).toMatchObject({ kind: "wait" });
    }
    expect(await abandonedEvents(payment.id)).toBe(0);
    // Sent back through the ko link, they choose again.
    expect(await handleShopperReturn(deps(), { paymentId: payment.id, signature: "x", outcome: "ko" })).toEqual({ kind: "redirect", url: payment.cancelUrl });
  });
});
