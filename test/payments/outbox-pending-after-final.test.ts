// A payment's pending call is never sent after its final call has been sent. When Shopify took
// a resolve whose answer was lost, the pending, sent after it, is refused (the session is
// resolved); that refusal was recorded as a failed call and replaced the payment's open flag
// ("overpaid": refund the excess crypto), which the resolve's retry then closed, so the
// merchant was never told to refund the excess. The pending may be stored before the resolve
// (and fail first), or just after it: a shopper's return that read the payment as still open
// stores it while the settlement stores the resolve (enqueuePending does not look for a final
// call). Through worker passes and inline deliveries, on SQLite and PostgreSQL.
import { beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../app/lib/logger.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { deliverDueMessages, deliverNow, enqueue, finalMessageKey } from "../../app/payments/outbox";
import type { Payment } from "../../generated/prisma/sqlite/client";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";
import { jsonAnswer, shopifyAnswering } from "../support/shopify-answers";

const SHOP = "outbox-pending-after-final.myshopify.com";

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: "outbox-pending-after-final-01" });
  let opened: OpenedRows;
  beforeAll(() => void (opened = rows()));

  let nowMs = Date.now();
  const clock = { now: () => new Date(nowMs) };

  /**
   * Shopify: each session's state. The next `pendingFailures` pending calls fail with a 503; the
   * next `lostResolves` resolves are taken, their answers lost.
   */
  const states = new Map<string, "PENDING" | "RESOLVED">();
  /** Every call Shopify received, in order. */
  let sent: string[] = [];
  let pendingFailures = 0;
  let lostResolves = 0;
  const stateOf = (code: "PENDING" | "RESOLVED") =>
    code === "RESOLVED" ? { __typename: "PaymentSessionStateResolved", code } : { __typename: "PaymentSessionStatePending", code, pendingReason: "BUYER_ACTION_REQUIRED" };

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
          const final = states.get(gid) === "RESOLVED";
          if (!final) states.set(gid, "PENDING");
          return jsonAnswer({
            data: {
              paymentSessionPending: {
                paymentSession: { id: gid, state: stateOf(final ? "RESOLVED" : "PENDING"), nextAction: null },
                userErrors: final ? [{ field: ["id"], message: "Payment session is already resolved", code: "PAYMENT_SESSION_INVALID_STATE" }] : [],
              },
            },
          });
        }
        states.set(gid, "RESOLVED");
        if (lostResolves-- > 0) throw new TypeError("fetch failed: connection reset after the request was sent");
        return jsonAnswer({ data: { paymentSessionResolve: { paymentSession: { id: gid, state: stateOf("RESOLVED"), nextAction: null }, userErrors: [] } } });
      }),
    }) as unknown as PaymentsDeps;

  const enqueueResolve = (payment: Payment) =>
    opened.db.$transaction((tx) =>
      enqueue(tx, { shopDomain: SHOP, paymentId: payment.id, dedupeKey: finalMessageKey(payment.id), payload: { kind: "payment.resolve", gid: payment.gid }, now: clock.now() }),
    );
  const enqueuePendingCall = (payment: Payment) =>
    opened.db.$transaction((tx) =>
      enqueue(tx, {
        shopDomain: SHOP,
        paymentId: payment.id,
        dedupeKey: `payment:${payment.id}:pending`,
        payload: { kind: "payment.pending", gid: payment.gid, reason: "BUYER_ACTION_REQUIRED", pendingExpiresAt: new Date(nowMs + 86_400_000).toISOString() },
        now: clock.now(),
      }),
    );

  /** A paid payment whose resolve is stored, then (5 ms later) a pending. */
  async function resolveThenPending() {
    const payment = await createPayment(opened, { state: "paid" });
    const final = await enqueueResolve(payment);
    nowMs += 5;
    const pending = await enqueuePendingCall(payment);
    nowMs += 5;
    return { payment, final, pending };
  }

  it("a pending stored first, whose first try failed: retried after the resolve Shopify took (answer lost), it is not a refusal; the overpaid flag stands and no call is left failed", async () => {
    sent = [];
    pendingFailures = 1;
    lostResolves = 1;
    const payment = await createPayment(opened, { state: "paid", attention: "overpaid", attentionDetail: "The shopper sent more than the amount due: refund the excess." });
    await enqueuePendingCall(payment);
    nowMs += 1;
    await enqueueResolve(payment);
    // Pass 1: the pending fails (503), the resolve reaches Shopify but its answer is lost.
    nowMs += 10;
    await deliverDueMessages(deps(), { worker: "w1" });
    expect(states.get(payment.gid)).toBe("RESOLVED");
    // The next passes, once both are due again.
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

  it("in a pass: a resolve Shopify took but whose answer was lost is not followed by the pending stored after it", async () => {
    sent = [];
    lostResolves = 1;
    const { payment, pending } = await resolveThenPending();
    await deliverDueMessages(deps(), { worker: "w1" });
    nowMs += 5_000;
    await deliverDueMessages(deps(), { worker: "w2" });

    expect(sent, "the pending reached Shopify after the final call").toEqual(["PaymentSessionResolve", "PaymentSessionResolve"]);
    expect(await opened.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ shopifyOutcome: "resolved", attention: null });
    expect((await opened.db.outboxMessage.findUniqueOrThrow({ where: { id: pending.id } })).status).toBe("done");
  });

  it("inline: the shopper's return delivering the pending while the resolve waits out its retry sends nothing after the final call", async () => {
    sent = [];
    lostResolves = 1;
    const { payment, final, pending } = await resolveThenPending();
    expect(await deliverNow(deps(), final.id)).toBe("retry");
    expect(await deliverNow(deps(), pending.id)).not.toBe("failed");
    nowMs += 5_000;
    expect(await deliverNow(deps(), final.id)).toBe("done");

    expect(sent, "the pending reached Shopify after the final call").toEqual(["PaymentSessionResolve", "PaymentSessionResolve"]);
    expect(await opened.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ shopifyOutcome: "resolved", attention: null });
  });
});
