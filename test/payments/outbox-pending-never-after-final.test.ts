// A pending call is never sent after the payment's final call. A shopper's return that read
// the payment as still open can store the pending just after the settlement stored the resolve
// (handleShopperReturn reads the payment first, enqueuePending does not look for a final call).
// The resolve goes first; when Shopify takes it but the answer is lost, neither the same pass,
// a later one, nor an inline delivery sends the pending after it. On SQLite and PostgreSQL.
import { beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../app/lib/logger.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { deliverDueMessages, deliverNow, enqueue, finalMessageKey } from "../../app/payments/outbox";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";
import { jsonAnswer, shopifyAnswering } from "../support/shopify-answers";

const SHOP = "outbox-pending-order.myshopify.com";

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: "outbox-pending-order-01" });
  let opened: OpenedRows;
  beforeAll(() => void (opened = rows()));

  let nowMs = Date.now();
  const clock = { now: () => new Date(nowMs) };
  const states = new Map<string, "PENDING" | "RESOLVED">();
  /** Every call Shopify received, in order. */
  let sent: string[] = [];
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

  async function resolveThenPending() {
    const payment = await createPayment(opened, { state: "paid" });
    const at = clock.now();
    const final = await opened.db.$transaction((tx) =>
      enqueue(tx, { shopDomain: SHOP, paymentId: payment.id, dedupeKey: finalMessageKey(payment.id), payload: { kind: "payment.resolve", gid: payment.gid }, now: at }),
    );
    nowMs += 5;
    const pending = await opened.db.$transaction((tx) =>
      enqueue(tx, {
        shopDomain: SHOP,
        paymentId: payment.id,
        dedupeKey: `payment:${payment.id}:pending`,
        payload: { kind: "payment.pending", gid: payment.gid, reason: "BUYER_ACTION_REQUIRED", pendingExpiresAt: new Date(at.getTime() + 86_400_000).toISOString() },
        now: clock.now(),
      }),
    );
    nowMs += 5;
    return { payment, final, pending };
  }

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
