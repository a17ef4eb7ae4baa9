// Two instances' outbox passes on one PostgreSQL database. A pass picks the due messages with
// one statement and claims them with a second. When another instance's pass claims, sends and
// records a message in between (Shopify throttled it: the message now waits out Shopify's
// Retry-After), the first pass's claim must not take it: the claim checks that the message is
// still due, so Shopify is not called again inside the window it asked the app to wait out.
import { beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../app/lib/logger.server";
import type { PlainSql } from "../../app/db/plain-sql.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { deliverDueMessages, enqueue, finalMessageKey } from "../../app/payments/outbox";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";
import { jsonAnswer, shopifyAnswering } from "../support/shopify-answers";

const SHOP = "outbox-claim-still-due.myshopify.com";

describe.each(ROW_DATABASES.filter((database) => database.name === "PostgreSQL"))("on $name, two instances", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: "outbox-claim-still-due-webhook-01" });
  let opened: OpenedRows;
  beforeAll(() => void (opened = rows()));

  const at = new Date();
  const clock = { now: () => at };
  /** Every call Shopify received. */
  const calls: string[] = [];

  function instance(sql: PlainSql): PaymentsDeps {
    return {
      db: opened.db,
      sql,
      clock,
      logger: silentLogger,
      shopify: shopifyAnswering(({ operationName }) => {
        calls.push(operationName);
        // Shopify throttles the app and asks for two minutes.
        return jsonAnswer({ errors: "Exceeded 2 calls per second for api client." }, 429, { "Retry-After": "120" });
      }),
    } as unknown as PaymentsDeps;
  }

  it("a message another instance just tried and put back to wait out Shopify's Retry-After is not sent again at once", async () => {
    const payment = await createPayment(opened, { state: "paid" });
    const message = await opened.db.$transaction((tx) =>
      enqueue(tx, { shopDomain: SHOP, paymentId: payment.id, dedupeKey: finalMessageKey(payment.id), payload: { kind: "payment.resolve", gid: payment.gid }, now: at }),
    );

    // Instance B: its pass has picked the due messages and is about to claim them.
    let picked!: () => void;
    const pickedDue = new Promise<void>((resolve) => (picked = resolve));
    let goOn!: () => void;
    const mayClaim = new Promise<void>((resolve) => (goOn = resolve));
    const slowSql: PlainSql = {
      ...opened.sql,
      async query<Row>(statement: Parameters<PlainSql["query"]>[0]): Promise<Row[]> {
        const result = await opened.sql.query<Row>(statement);
        if (statement.sql.includes(`"turn"`)) {
          picked();
          await mayClaim;
        }
        return result;
      },
    };
    const passB = deliverDueMessages(instance(slowSql), { worker: "instance-b", concurrency: 4 });
    await pickedDue;

    // Instance A claims the message, Shopify throttles it: it waits two minutes now.
    const passA = await deliverDueMessages(instance(opened.sql), { worker: "instance-a", concurrency: 4 });
    expect(passA.retry).toBe(1);
    const waiting = await opened.db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } });
    expect(waiting).toMatchObject({ status: "pending", attempts: 1, lockedBy: null });
    expect(waiting.nextAttemptAt.getTime() - at.getTime()).toBe(120_000);
    expect(calls).toHaveLength(1);

    // Instance B goes on: the message is not due for two minutes, so it must leave it alone.
    goOn();
    const counts = await passB;
    expect(calls, "Shopify was called again inside the Retry-After it asked for").toHaveLength(1);
    expect(counts.retry).toBe(0);
    expect((await opened.db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } })).attempts).toBe(1);
  });
});
