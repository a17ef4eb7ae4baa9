// The reconciler and an order for other terms than its payment's (another amount), which the
// gateway shows paid: its listing never marks the payment paid, and at the end of Shopify's
// pending window the payment is rejected with the merchant told what differs and that the
// crypto is the shopper's, not that the gateway had not completed it. On SQLite and PostgreSQL.
import { randomUUID } from "node:crypto";
import { ok } from "neverthrow";
import { beforeAll, describe, expect, it } from "vitest";
import type { GatewayClient } from "../../app/gateway/client";
import type { GatewayDirectory, PaymentsDeps, ShopGatewayAccess } from "../../app/payments/deps";
import { FINALISE_AFTER_MS, reconcileOnce } from "../../app/payments/reconcile";
import { silentLogger } from "../../app/lib/logger.server";
import { documentedOrder } from "../gateway/support/fixtures";
import { DEFAULT_PAYMENT_TERMS, paymentColumns } from "../support/payment-rows";
import { ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: "other-terms.myshopify.com", webhookToken: "other-terms-webhook-token-01" });
  let opened: OpenedRows;
  beforeAll(() => void (opened = rows()));

  it("a paid order for a tenth of the payment's amount is never paid on, and the payment is rejected at the window's end with what differs", async () => {
    const now = new Date();
    const createdAt = new Date(now.getTime() - FINALISE_AFTER_MS - 60_000);
    const stale = await opened.db.payment.create({ data: paymentColumns(opened.shopId, { gatewayOrderId: randomUUID(), gatewayStatus: "PE", createdAt }) });
    const fresh = await opened.db.payment.create({ data: paymentColumns(opened.shopId, { gatewayOrderId: randomUUID(), gatewayStatus: "PE", createdAt: new Date(now.getTime() - 600_000) }) });
    const tenth = { amount: "4.99", currency: DEFAULT_PAYMENT_TERMS.currency };
    const orders = [stale, fresh].map((p) => documentedOrder(p.gatewayOrderId!, "CO", 1, new Date(now.getTime() - 300_000).toISOString(), tenth));
    const client = {
      listOrders: async () => ok({ orders, unreadable: [] }),
      orderInfo: async (id: string) => ok(orders.find((o) => o.identifier === id)!),
      quotaRemaining: async () => ({ general: { minute: 60, day: 2000 }, critical: { minute: 15, day: 200 } }),
    } as unknown as GatewayClient;
    const access: ShopGatewayAccess = { env: "sandbox", client, secretKeyHex: "00".repeat(32), deviceKeyHash: "device-sandbox" };
    const gateways: GatewayDirectory = { forShop: (_shop, env) => (env === "sandbox" ? access : null), retiredFor: () => null, currencies: async () => null };
    const deps = { db: opened.db, sql: opened.sql, clock: { now: () => new Date() }, logger: silentLogger, gateways } as unknown as PaymentsDeps;

    await reconcileOnce(deps, { worker: "a", force: true });

    const open = await opened.db.payment.findUniqueOrThrow({ where: { id: fresh.id } });
    expect(open).toMatchObject({ state: "awaiting_payment", gatewayStatus: "CO", attention: "amount_mismatch" });
    const ended = await opened.db.payment.findUniqueOrThrow({ where: { id: stale.id } });
    expect(ended).toMatchObject({ state: "failed", attention: "pending_window_expired" });
    expect(ended.attentionDetail).toBe(
      "The gateway order is for 4.99 EUR, but Shopify's payment is for 49.90 EUR. The app never marked the payment paid on that order (gateway status CO), and Shopify's 3-day pending window was closing, so the payment was marked as not paid. Any crypto received on the order is the shopper's: refund it from the gateway dashboard, or arrange the order with the shopper.",
    );
    const messages = await opened.db.outboxMessage.findMany({ where: { paymentId: { in: [stale.id, fresh.id] } }, select: { paymentId: true, kind: true } });
    expect(messages).toEqual([{ paymentId: stale.id, kind: "payment.reject" }]);
  });
});
