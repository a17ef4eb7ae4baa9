// Crypto the shopper sent to an order the merchant then deleted at the gateway (AC, then DE:
// FACTS.md makes DE reachable from any open status). The shopper's money is held by the
// deleted order and the Shopify payment is rejected, so a person is told (late_payment),
// whichever of a read and a signed DE webhook settles the payment first. On SQLite and
// PostgreSQL.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { parseGatewayStatus, type ParsedGatewayStatus } from "../../app/gateway/statuses";
import { silentLogger } from "../../app/lib/logger.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { settleFromGatewayOrder, settleFromSignedWebhook } from "../../app/payments/settle-payment";
import { documentedOrder } from "../gateway/support/fixtures";
import { DEFAULT_PAYMENT_TERMS } from "../support/payment-rows";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

const SHOP = "deleted-order.myshopify.com";

describe.each(ROW_DATABASES)("crypto held by an order deleted at the gateway, on $name", (database) => {
  let rows: OpenedRows;
  const opened = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: "deleted-order-webhook-token-01" });
  beforeAll(() => void (rows = opened()));
  const deps = (): PaymentsDeps => ({ db: rows.db, sql: rows.sql, clock: { now: () => new Date() }, logger: silentLogger }) as unknown as PaymentsDeps;
  const read = (paymentId: string, status: string, editedAt: string, id: string) =>
    settleFromGatewayOrder(deps(), paymentId, documentedOrder(id, status, 1, editedAt, DEFAULT_PAYMENT_TERMS), "reconcile", new Date());

  /** A payment whose order a read showed in AC with the shopper's transaction (the shopper's waiting page reads it). */
  async function confirmingWithCrypto() {
    const id = randomUUID();
    const payment = await createPayment(rows, { gatewayOrderId: id, gatewayStatus: "PE" });
    const confirming = await read(payment.id, "AC", "2026-11-24T10:00:00Z", id);
    expect(confirming.payment.state).toBe("confirming");
    expect(await rows.db.paymentTransaction.count({ where: { paymentId: payment.id } })).toBe(1);
    return { id, payment };
  }

  it("a read of the deleted order rejects the payment and flags the crypto it holds", async () => {
    const { id, payment } = await confirmingWithCrypto();
    const settled = await read(payment.id, "DE", "2026-11-24T10:05:00Z", id);
    expect(settled.payment).toMatchObject({ state: "failed", attention: "late_payment" });
  });

  it("a signed DE webhook settles the payment first, then the reconciler's read verifies it: the crypto held is still flagged for a person", async () => {
    const { id, payment } = await confirmingWithCrypto();
    const row = await rows.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    const signed = await settleFromSignedWebhook(deps(), { payment: row, shopDomain: SHOP }, {
      identifier: id,
      status: parseGatewayStatus("DE") as Extract<ParsedGatewayStatus, { known: true }>,
    });
    expect(signed?.payment.state).toBe("failed");
    expect(signed?.finalMessage).not.toBeNull();
    expect(signed?.payment.attention).toBe("late_payment");
    // The reconciler's listing reads the same deleted order, with the transaction the app already holds.
    const verified = await read(payment.id, "DE", "2026-11-24T10:05:00Z", id);
    expect(verified.payment.unverifiedSince).toBeNull();
    expect(verified.payment.state).toBe("failed");
    expect(verified.payment.attention).toBe("late_payment");
  });
});
