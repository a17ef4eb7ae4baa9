// A payment's pending call stored before its final call, when Shopify took the final resolve
// but its answer was lost: the pending is never sent after it. Sent, Shopify refuses it (the
// session is resolved); that refusal was recorded as a failed call and replaced the payment's
// open "overpaid" flag (refund the excess crypto), which the resolve's retry then closed, so the
// merchant was never told to refund the excess. On SQLite and PostgreSQL.
import { beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../app/lib/logger.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { deliverDueMessages, enqueue, finalMessageKey } from "../../app/payments/outbox";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";
import { jsonAnswer, shopifyAnswering } from "../support/shopify-answers";

const SHOP = "outbox-lost-final.myshopify.com";

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: "outbox-lost-final-01" });
  let opened: OpenedRows;
  beforeAll(() => void (opened = rows()));

  let nowMs = Date.now();
  const clock = { now: () => new Date(nowMs) };

  /** Shopify: each session's state; the first pending fails with a 503, the first resolve is taken but its answer is lost. */
  const states = new Map<string, "PENDING" | "RESOLVED">();
  const sent: string[] = [];
  let pendingFailures = 1;
  let lostResolves = 1;
  const field = (operation: string) => operation.charAt(0).toLowerCase() + operation.slice(1);
  const stateOf = (code: "PENDING" | "RESOLVED") =>
    code === "RESOLVED" ? { __typename: "PaymentSessionStateResolved", code } : { __typename: "PaymentSessionStatePending", code, pendingReason: "NETWORK_ACTION_REQUIRED" };

  const deps = (): PaymentsDeps =>
    ({
      db: opened.db,
      sql: opened.sql,
      clock,
      logger: silentLogger,
      shopify: shopifyAnswering(({ operationName, variables }) => {
        const gid = String(variables.id);
        sent.push(operationName);
        if (operationName === "PaymentSessionPending") {
          if (pendingFailures-- > 0) return jsonAnswer({ errors: [{ message: "unavailable" }] }, 503);
          if (states.get(gid) === "RESOLVED") {
            return jsonAnswer({
              data: { paymentSessionPending: { paymentSession: { id: gid, state: stateOf("RESOLVED"), nextAction: null }, userErrors: [{ field: ["id"], message: "Payment session is already resolved", code: "PAYMENT_SESSION_INVALID_STATE" }] } },
            });
          }
          states.set(gid, "PENDING");
          return jsonAnswer({ data: { paymentSessionPending: { paymentSession: { id: gid, state: stateOf("PENDING"), nextAction: null }, userErrors: [] } } });
        }
        states.set(gid, "RESOLVED");
        if (lostResolves-- > 0) throw new TypeError("fetch failed: connection reset after the request was sent");
        return jsonAnswer({ data: { [field(operationName)]: { paymentSession: { id: gid, state: stateOf("RESOLVED"), nextAction: null }, userErrors: [] } } });
      }),
    }) as unknown as PaymentsDeps;

  it("the pending retried after a resolve Shopify took (answer lost) is not a refusal: the payment's overpaid flag stands and no call is left failed", async () => {
    const payment = await createPayment(opened, { state: "paid", attention: "overpaid", attentionDetail: "The shopper sent more than the amount due: refund the excess." });
    const at = clock.now();
    await opened.db.$transaction(async (tx) => {
      await enqueue(tx, {
        shopDomain: SHOP,
        paymentId: payment.id,
        dedupeKey: `payment:${payment.id}:pending`,
        payload: { kind: "payment.pending", gid: payment.gid, reason: "NETWORK_ACTION_REQUIRED", pendingExpiresAt: new Date(at.getTime() + 86_400_000).toISOString() },
        now: at,
      });
      await enqueue(tx, { shopDomain: SHOP, paymentId: payment.id, dedupeKey: finalMessageKey(payment.id), payload: { kind: "payment.resolve", gid: payment.gid }, now: new Date(at.getTime() + 1) });
    });
    // Pass 1: the pending fails (503), the resolve reaches Shopify but its answer is lost.
    nowMs += 10;
    await deliverDueMessages(deps(), { worker: "w1" });
    expect(states.get(payment.gid)).toBe("RESOLVED");
    // Pass 2, once both are due again.
    nowMs += 5_000;
    await deliverDueMessages(deps(), { worker: "w2" });
    nowMs += 5_000;
    await deliverDueMessages(deps(), { worker: "w3" });

    expect(sent).toContain("PaymentSessionResolve");
    const after = await opened.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(after.shopifyOutcome).toBe("resolved");
    expect(after, "the overpaid flag (refund the excess) was replaced, then closed").toMatchObject({ attention: "overpaid", attentionResolvedAt: null });
    const messages = await opened.db.outboxMessage.findMany({ where: { paymentId: payment.id }, orderBy: { createdAt: "asc" } });
    expect(messages.map((m) => [m.kind, m.status])).toEqual([
      ["payment.pending", "done"],
      ["payment.resolve", "done"],
    ]);
  });
});
