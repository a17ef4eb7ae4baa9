// Two instances on PostgreSQL: an inline delivery (deliverNow: a shopper's return, "retry now",
// a readiness change) renewing the shop's expired offline token (up to 20 s) before its call
// (up to 15 s) outlasts half its 30 s claim. It renews the claim before the call, so another
// instance's outbox pass, running meanwhile, does not take the message and send the same call
// to Shopify again while the first is on its way.
import { beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../app/lib/logger.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { deliverDueMessages, deliverNow, enqueue, finalMessageKey } from "../../app/payments/outbox";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";
import { sessionTaken, shopifyAnswering } from "../support/shopify-answers";

const SHOP = "inline-claim.myshopify.com";

describe.each(ROW_DATABASES.filter((database) => database.name === "PostgreSQL"))("on $name, two instances", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: "inline-claim-webhook-token-000001" });
  let opened: OpenedRows;
  beforeAll(() => void (opened = rows()));

  const T = new Date("2026-11-25T12:00:00.000Z").getTime();
  let nowMs = T;
  const clock = { now: () => new Date(nowMs) };
  /** Every resolve Shopify received, by instance. */
  const calls: string[] = [];

  function instance(name: string, options: { renewTokenMs?: number; onCall?: () => Promise<void> } = {}): PaymentsDeps {
    return {
      db: opened.db,
      sql: opened.sql,
      clock,
      logger: silentLogger,
      shopify: shopifyAnswering(
        async ({ operationName, variables }) => {
          calls.push(name);
          await options.onCall?.();
          return sessionTaken(operationName, String(variables.id));
        },
        // The offline token had expired: renewing it took this long (the directory allows 20 s).
        { beforeClient: () => void (nowMs += options.renewTokenMs ?? 0) },
      ),
    } as unknown as PaymentsDeps;
  }

  it("a shopper's return delivering the resolve slowly keeps it: another instance's pass does not send it again meanwhile", async () => {
    const payment = await createPayment(opened, { state: "paid" });
    const message = await opened.db.$transaction((tx) =>
      enqueue(tx, { shopDomain: SHOP, paymentId: payment.id, dedupeKey: finalMessageKey(payment.id), payload: { kind: "payment.resolve", gid: payment.gid }, now: new Date(T) }),
    );

    // Instance I (a shopper's return): token renewal 20 s, then Shopify answers after 11 s.
    let onItsWay!: () => void;
    const calling = new Promise<void>((resolve) => (onItsWay = resolve));
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const inline = deliverNow(
      instance("inline", {
        renewTokenMs: 20_000,
        onCall: async () => {
          nowMs += 11_000;
          onItsWay();
          await answered;
        },
      }),
      message.id,
    );
    await calling;
    // 31 s after the inline claim, still within each step's own bound: instance W's outbox pass.
    await deliverDueMessages(instance("worker"), { worker: "instance-w", concurrency: 4 });
    answer();
    await inline;

    expect(calls, "the resolve was sent to Shopify by both instances").toEqual(["inline"]);
  });
});
