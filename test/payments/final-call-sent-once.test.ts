// A payment's final call that Shopify took (done) is never sent again, however
// often an inline delivery asks for it (a shopper refreshing the return page, "retry now",
// a readiness change): deliverNow answers "done" without a call. On both databases.
import { beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../app/lib/logger.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { deliverDueMessages, deliverNow, enqueue, finalMessageKey } from "../../app/payments/outbox";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";
import { sessionTaken, shopifyAnswering } from "../support/shopify-answers";

const SHOP = "final-call-once.myshopify.com";

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: "final-call-once-webhook-token-01" });
  let opened: OpenedRows;
  beforeAll(() => void (opened = rows()));

  let nowMs = new Date("2026-11-25T12:00:00.000Z").getTime();
  const clock = { now: () => new Date(nowMs) };
  /** Every call Shopify received: the mutation's name and the session's gid. */
  const calls: string[] = [];

  const deps = (): PaymentsDeps =>
    ({
      db: opened.db,
      sql: opened.sql,
      clock,
      logger: silentLogger,
      shopify: shopifyAnswering(({ operationName, variables }) => {
        calls.push(`${operationName} ${String(variables.id)}`);
        return sessionTaken(operationName, String(variables.id));
      }),
    }) as unknown as PaymentsDeps;

  it.each([
    ["resolve", "paid", (gid: string) => ({ kind: "payment.resolve" as const, gid })],
    ["reject", "failed", (gid: string) => ({ kind: "payment.reject" as const, gid, code: "CANCELLED_PAYMENT" as const, merchantMessage: "The crypto payment expired before the shopper paid." })],
  ] as const)("a %s Shopify took is not sent again by inline deliveries or later passes", async (_what, state, payload) => {
    calls.length = 0;
    const payment = await createPayment(opened, { state });
    const message = await opened.db.$transaction((tx) =>
      enqueue(tx, { shopDomain: SHOP, paymentId: payment.id, dedupeKey: finalMessageKey(payment.id), payload: payload(payment.gid), now: clock.now() }),
    );
    expect(await deliverNow(deps(), message.id)).toBe("done");
    expect(calls).toHaveLength(1);
    expect((await opened.db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } })).status).toBe("done");

    // The shopper refreshes the return page, a minute apart, and the worker's passes run.
    for (let i = 0; i < 3; i++) {
      nowMs += 60_000;
      expect(await deliverNow(deps(), message.id)).toBe("done");
      await deliverDueMessages(deps(), { worker: `w${i}` });
    }
    expect(calls, "the final call reached Shopify more than once").toHaveLength(1);
    const after = await opened.db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } });
    expect(after.status).toBe("done");
    expect(after.attempts).toBe(1);
    expect(await opened.db.outboxMessage.count({ where: { paymentId: payment.id } })).toBe(1);
  });
});
