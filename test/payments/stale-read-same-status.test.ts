// A gateway read of an older version of the order (its edited_at before the one
// the payment already shows) changes nothing, even when it shows the same status: a listing
// taken before crypto arrived on an expired order, answered after the read that saw it, must
// not take the stored version, amounts and transactions' count back, nor add timeline entries.
// On SQLite and PostgreSQL.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { GatewayOrder } from "../../app/gateway/schemas";
import { silentLogger } from "../../app/lib/logger.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { settleFromGatewayOrder } from "../../app/payments/settle-payment";
import { documentedOrder } from "../gateway/support/fixtures";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

describe.each(ROW_DATABASES)("on $name", (database) => {
  let rows: OpenedRows;
  const opened = rowsDatabaseForFile(database, { shopDomain: "stale-read-same-status.myshopify.com", webhookToken: "stale-read-same-status-token-01" });
  beforeAll(() => void (rows = opened()));
  const deps = (): PaymentsDeps => ({ db: rows.db, sql: rows.sql, clock: { now: () => new Date() }, logger: silentLogger }) as unknown as PaymentsDeps;

  /** The order expired unpaid (T1), then the shopper's crypto arrived on it and the gateway kept EX (T2). */
  const expiredUnpaid = (id: string): GatewayOrder => ({ ...documentedOrder(id, "EX", 0, "2026-04-17T10:30:00Z"), received_amount: "0", percentage: "0.0" }) as GatewayOrder;
  const expiredThenPaid = (id: string): GatewayOrder => documentedOrder(id, "EX", 1, "2026-04-17T10:45:00Z");

  it("an older read of the same final status after a newer one leaves the payment as the newer one left it", async () => {
    const id = randomUUID();
    const payment = await createPayment(rows, { gatewayOrderId: id, gatewayStatus: "PE", state: "awaiting_payment" });
    await settleFromGatewayOrder(deps(), payment.id, expiredUnpaid(id), "reconcile", new Date());
    const late = await settleFromGatewayOrder(deps(), payment.id, expiredThenPaid(id), "webhook", new Date());
    expect(late.payment).toMatchObject({ state: "failed", gatewayStatus: "EX", attention: "late_payment" });
    const newer = await rows.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(newer.gatewayEditedAt?.toISOString()).toBe("2026-04-17T10:45:00.000Z");
    expect(newer.receivedAmount).not.toBe("0");
    const eventsBefore = await rows.db.paymentEvent.count({ where: { paymentId: payment.id } });

    // The listing taken before the crypto arrived, answered late.
    const stale = await settleFromGatewayOrder(deps(), payment.id, expiredUnpaid(id), "reconcile", new Date());
    expect(stale.finalMessage).toBeNull();
    const after = await rows.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(after.gatewayEditedAt?.toISOString(), "the stored order version went back").toBe("2026-04-17T10:45:00.000Z");
    expect(after.receivedAmount, "the received amount went back").toBe(newer.receivedAmount);
    expect(after.percentage).toBe(newer.percentage);
    expect(after).toMatchObject({ state: "failed", gatewayStatus: "EX", attention: "late_payment", attentionDetail: newer.attentionDetail });
    expect(after.updatedAt.getTime()).toBe(newer.updatedAt.getTime());
    expect(await rows.db.paymentEvent.count({ where: { paymentId: payment.id } })).toBe(eventsBefore);
    expect(await rows.db.outboxMessage.count({ where: { paymentId: payment.id } })).toBe(1);
  });
});
