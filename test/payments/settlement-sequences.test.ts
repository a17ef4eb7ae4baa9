// The payment state machine, through the real settlement on a real database: any sequence of
// gateway observations (reads of any status, at any version of the order, repeated and out of
// order, and signed webhooks' final statuses) never moves a payment backwards, and once it is
// final it has exactly one final Shopify call in the outbox, matching it (a resolve for paid, a
// reject for failed), which no later observation adds to or changes. On SQLite and PostgreSQL.
// (The pure mapping's own property: test/unit/status-mapping.test.ts.)
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { GATEWAY_STATUSES, isFinalGatewayStatus, parseGatewayStatus, type GatewayStatus } from "../../app/gateway/statuses";
import { silentLogger } from "../../app/lib/logger.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { isFinalPaymentState, type PaymentState } from "../../app/payments/payment-state";
import { settleFromGatewayOrder, settleFromSignedWebhook } from "../../app/payments/settle-payment";
import { documentedOrder } from "../gateway/support/fixtures";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

const SHOP = "settlement-sequences.myshopify.com";
const RANK: Record<PaymentState, number> = { started: 0, awaiting_payment: 1, confirming: 2, paid: 3, failed: 3, not_started: 3 };

type Observation =
  | { kind: "read"; status: GatewayStatus; version: number; transactions: number }
  | { kind: "signed"; status: GatewayStatus };

const observation: fc.Arbitrary<Observation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("read" as const), status: fc.constantFrom(...GATEWAY_STATUSES), version: fc.integer({ min: 0, max: 5 }), transactions: fc.integer({ min: 0, max: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("signed" as const), status: fc.constantFrom(...GATEWAY_STATUSES.filter((s) => isFinalGatewayStatus(s))) }) },
);

/** The order's edited_at at `version`: later versions are later times. */
const editedAt = (version: number) => new Date(Date.UTC(2026, 3, 17, 10, version * 5)).toISOString().replace(".000Z", "Z");

describe.each(ROW_DATABASES)("on $name", (database) => {
  let rows: OpenedRows;
  const opened = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: "settlement-sequences-token-01" });
  beforeAll(() => void (rows = opened()));
  const deps = (): PaymentsDeps => ({ db: rows.db, sql: rows.sql, clock: { now: () => new Date() }, logger: silentLogger }) as unknown as PaymentsDeps;

  it("any sequence of observations never moves a payment back, and a final payment has exactly one matching final call", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(observation, { minLength: 1, maxLength: 12 }), async (sequence) => {
        const orderId = randomUUID();
        const payment = await createPayment(rows, { gatewayOrderId: orderId, gatewayStatus: "NR", state: "awaiting_payment" });
        let rank = RANK.awaiting_payment;
        let finalState: PaymentState | null = null;
        for (const seen of sequence) {
          if (seen.kind === "read") {
            const order = documentedOrder(orderId, seen.status, seen.transactions, editedAt(seen.version));
            await settleFromGatewayOrder(deps(), payment.id, { ...order, status: parseGatewayStatus(seen.status) }, "reconcile", new Date());
          } else {
            const current = await rows.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
            await settleFromSignedWebhook(deps(), { payment: current, shopDomain: SHOP }, { identifier: orderId, status: parseGatewayStatus(seen.status) as Extract<ReturnType<typeof parseGatewayStatus>, { known: true }> });
          }
          const now = await rows.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
          const state = now.state as PaymentState;
          expect(RANK[state], `moved back from rank ${rank} to ${state}`).toBeGreaterThanOrEqual(rank);
          if (finalState !== null) expect(state, "a final payment changed its outcome").toBe(finalState);
          rank = RANK[state];
          const finals = await rows.db.outboxMessage.findMany({ where: { paymentId: payment.id, kind: { in: ["payment.resolve", "payment.reject"] } } });
          if (isFinalPaymentState(state)) {
            finalState = state;
            expect(finals, "a final payment has exactly one final call").toHaveLength(1);
            expect(finals[0]!.kind).toBe(state === "paid" ? "payment.resolve" : "payment.reject");
          } else {
            expect(finals, "an open payment has no final call").toHaveLength(0);
          }
        }
      }),
      { numRuns: database.name === "SQLite" ? 60 : 25 },
    );
  }, 120_000);
});
