// An underpaid (IA) or out-of-condition (OC) order first seen through a gateway
// read (its webhook lost: the reconciler, a shopper's return) rejects the payment AND flags it
// for the merchant, who holds crypto to refund, just as its signed webhook would have. The
// checkout scenarios only cover IA arriving by webhook. On SQLite and PostgreSQL.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../app/lib/logger.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { settleFromGatewayOrder } from "../../app/payments/settle-payment";
import { documentedOrder } from "../gateway/support/fixtures";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

describe.each(ROW_DATABASES)("on $name", (database) => {
  let rows: OpenedRows;
  const opened = rowsDatabaseForFile(database, { shopDomain: "read-settles-underpaid.myshopify.com", webhookToken: "read-settles-underpaid-token-01" });
  beforeAll(() => void (rows = opened()));
  const deps = (): PaymentsDeps => ({ db: rows.db, sql: rows.sql, clock: { now: () => new Date() }, logger: silentLogger }) as unknown as PaymentsDeps;

  it.each([
    ["IA", "underpaid", "INSUFFICIENT_FUNDS", "PE"],
    ["IA", "underpaid", "INSUFFICIENT_FUNDS", "AC"],
    ["OC", "out_of_condition", "PROCESSING_ERROR", "AC"],
  ] as const)("a read showing %s flags the payment %s and rejects it with %s (stored status %s)", async (status, attention, code, stored) => {
    const id = randomUUID();
    const payment = await createPayment(rows, { gatewayOrderId: id, gatewayStatus: stored, state: stored === "AC" ? "confirming" : "awaiting_payment" });
    const settled = await settleFromGatewayOrder(deps(), payment.id, documentedOrder(id, status, 1, "2026-04-17T10:45:00Z"), "reconcile", new Date());
    expect(settled.finalMessage).not.toBeNull();
    const after = await rows.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(after).toMatchObject({ state: "failed", gatewayStatus: status, attention, attentionResolvedAt: null });
    expect(after.attentionDetail).toMatch(/refund it from the gateway dashboard/);
    const [message, ...more] = await rows.db.outboxMessage.findMany({ where: { paymentId: payment.id } });
    expect(more).toHaveLength(0);
    expect(JSON.parse(message!.payload)).toMatchObject({ kind: "payment.reject", code });
    const flags = await rows.db.paymentEvent.findMany({ where: { paymentId: payment.id, type: "attention" } });
    expect(flags.map((f) => (JSON.parse(f.detail) as { reason: string }).reason)).toEqual([attention]);
  });
});
