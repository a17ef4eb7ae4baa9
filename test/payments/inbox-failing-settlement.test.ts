// A webhook pass where one payment's settlement fails (a write the database refuses): that
// payment's webhooks wait to be tried again, and the other payments of the same shop and pass
// are settled and done with all the same, whether their webhooks settle them by themselves or
// their orders are read first. A webhook whose processing still fails a day after it came is
// given up, with why, and logged: its payment is left to the reconciler, instead of a try every
// 5 minutes for good. Before, the failure put every webhook of the shop's group back to wait,
// and nothing bounded the tries. On SQLite and PostgreSQL.
import type { Prisma } from "../../generated/prisma/sqlite/client";
import { describe, expect, it } from "vitest";
import type { PlainSql, PlainStatements } from "../../app/db/plain-sql.server";
import { INBOX_GIVE_UP_MS, processWebhookInbox } from "../../app/payments/process-webhooks";
import { PAID_IN_FULL, paymentThrough, stackOnDatabase, waitFor } from "../support/stack";

/** The app's statements, but the one that writes `paymentId`'s settlement fails, as a refused write would. */
function failingFor(sql: PlainSql, paymentId: string): PlainSql {
  const refuses = (statement: Prisma.Sql) => statement.sql.includes('UPDATE "Payment"') && statement.values.includes(paymentId);
  const guarded = <T extends PlainStatements>(target: T): T => ({
    ...target,
    kind: target.kind,
    execute: (statement: Prisma.Sql) => (refuses(statement) ? Promise.reject(new Error("value out of range for the column")) : target.execute(statement)),
    query: <Row,>(statement: Prisma.Sql) => (refuses(statement) ? Promise.reject(new Error("value out of range for the column")) : target.query<Row>(statement)),
  });
  return { ...guarded(sql), executeInTransaction: (statements) => sql.executeInTransaction(statements), inTransaction: (work) => sql.inTransaction((tx) => work(guarded(tx))) };
}

describe.each(["sqlite", "postgresql"] as const)("on %s", (kind) => {
  const stack = stackOnDatabase(kind, { workers: false });

  describe.each([
    { name: "settled by their signed webhooks", readOrderOnWebhook: false },
    { name: "settled from a read of their orders", readOrderOnWebhook: true },
  ])("payments $name", ({ readOrderOnWebhook }) => {
    it("one payment's failing settlement holds back its own webhooks only; a day on, they are given up", async () => {
      const { db } = stack().services;
      await db.shop.updateMany({ data: { readOrderOnWebhook } });
      await db.gatewayWebhook.updateMany({ where: { processedAt: null }, data: { processedAt: new Date() } });
      const failing = await paymentThrough(stack(), PAID_IN_FULL);
      const other = await paymentThrough(stack(), PAID_IN_FULL);
      for (const { orderId } of [failing, other]) {
        await waitFor(async () => (await db.gatewayWebhook.count({ where: { orderId, status: "CO" } })) > 0, "the order's CO notification");
      }
      const coOf = (orderId: string) => db.gatewayWebhook.findFirstOrThrow({ where: { orderId, status: "CO" } });
      const lines: string[] = [];
      const logger = { ...stack().services.logger, error: (msg: string, fields?: Record<string, unknown>) => void lines.push(`${msg} ${JSON.stringify(fields ?? {})}`) };
      const deps = { ...stack().services, sql: failingFor(stack().services.sql, failing.payment.id), logger };

      await processWebhookInbox(deps, { worker: "test" });

      // The other payment is settled and its notification done with.
      expect((await db.payment.findUniqueOrThrow({ where: { id: other.payment.id } })).state).toBe("paid");
      expect((await coOf(other.orderId)).processedAt).not.toBeNull();
      expect(await db.outboxMessage.count({ where: { paymentId: other.payment.id } })).toBeGreaterThan(0);
      // The failing one waits, with why.
      expect((await db.payment.findUniqueOrThrow({ where: { id: failing.payment.id } })).state).toBe("awaiting_payment");
      const waiting = await coOf(failing.orderId);
      expect(waiting.processedAt).toBeNull();
      expect(waiting.lastError).toBe("settling the payment failed: value out of range for the column");
      expect(waiting.nextAttemptAt.getTime()).toBeGreaterThan(Date.now());
      expect(lines.some((line) => line.startsWith("Settling a payment from its webhooks failed") && line.includes(failing.payment.id))).toBe(true);

      // Still failing a day after it came (its arrival moved back, and due again): given up, with why, and logged.
      const now = stack().services.clock.now();
      await db.gatewayWebhook.update({ where: { id: waiting.id }, data: { receivedAt: new Date(now.getTime() - INBOX_GIVE_UP_MS - 60_000), nextAttemptAt: now } });
      await processWebhookInbox(deps, { worker: "test" });
      const givenUp = await coOf(failing.orderId);
      expect(givenUp.processedAt).not.toBeNull();
      expect(givenUp.lastError).toMatch(/^given up after 2 attempts \(the reconciler reads the order\): settling the payment failed: value out of range for the column$/);
      expect(lines.some((line) => line.startsWith("Webhook given up") && line.includes(givenUp.id))).toBe(true);
      // The payment is the reconciler's: left open, not settled from the notification.
      expect((await db.payment.findUniqueOrThrow({ where: { id: failing.payment.id } })).state).toBe("awaiting_payment");
    });
  });
});
