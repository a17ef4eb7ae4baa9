// How the outbox reads Shopify's answers to a payment's final call, on SQLite and PostgreSQL,
// with the real Payments Apps client over a fetch whose answer each test chooses. A refusal
// that comes back without the session is a refusal whatever its words (Shopify's refusal of a
// second payment of one checkout says "already been resolved" of the other session): the
// payment is flagged. A second paid payment of a checkout whose other payment Shopify accepted
// is rejected in Shopify once Shopify refuses its resolve, and flagged as paid twice. A wait Shopify asks for (Retry-After, or its cost limit's restore time) is obeyed
// up to the outbox's own cap of 10 minutes, never longer: a paid resolve is not parked unseen.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../app/lib/logger.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { deliverNow, enqueue, finalMessageKey, retryFinalCallNow } from "../../app/payments/outbox";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";
import { jsonAnswer, shopifyAnswering } from "../support/shopify-answers";

const SHOP = "outbox-shopify-answers.myshopify.com";
/** The outbox's longest wait between two attempts. */
const CAP_MS = 600_000;

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: "outbox-answers-webhook-01" });
  let opened: OpenedRows;
  beforeAll(() => void (opened = rows()));

  let at = new Date();
  const clock = { now: () => at };
  afterEach(() => void (at = new Date()));

  /** What Shopify answers the next call; `answers` by operation name, when set, before it. */
  let answer: { status: number; headers?: Record<string, string>; body: unknown };
  let answers: Record<string, { status: number; body: unknown }> = {};
  /** The operations sent, in order. */
  let sent: string[] = [];
  afterEach(() => {
    answers = {};
    sent = [];
  });
  const deps = (): PaymentsDeps =>
    ({
      db: opened.db,
      sql: opened.sql,
      clock,
      logger: silentLogger,
      shopify: shopifyAnswering(({ operationName }) => {
        sent.push(operationName);
        const chosen = answers[operationName] ?? answer;
        return jsonAnswer(chosen.body, chosen.status, answer?.headers);
      }),
    }) as unknown as PaymentsDeps;

  /** A paid payment with its resolve stored, due now. */
  async function paidWithResolve(columns: Parameters<typeof createPayment>[1] = {}) {
    const payment = await createPayment(opened, { state: "paid", ...columns });
    const message = await opened.db.$transaction((tx) =>
      enqueue(tx, { shopDomain: SHOP, paymentId: payment.id, dedupeKey: finalMessageKey(payment.id), payload: { kind: "payment.resolve", gid: payment.gid }, now: at }),
    );
    return { payment, message };
  }

  const refusedWithoutSession = (message: string) => ({
    status: 200,
    body: { data: { paymentSessionResolve: { paymentSession: null, userErrors: [{ field: ["id"], message }] } } },
  });

  const resolved = (gid: string) => ({
    status: 200,
    body: { data: { paymentSessionResolve: { paymentSession: { id: gid, state: { __typename: "PaymentSessionStateResolved", code: "RESOLVED" }, nextAction: null }, userErrors: [] } } },
  });

  const rejected = (gid: string) => ({
    status: 200,
    body: {
      data: {
        paymentSessionReject: {
          paymentSession: { id: gid, state: { __typename: "PaymentSessionStateRejected", code: "REJECTED", reason: "PROCESSING_ERROR", merchantMessage: null }, nextAction: null },
          userErrors: [],
        },
      },
    },
  });

  it("a second paid payment of a checkout whose other payment Shopify accepted: its refused resolve is followed by a reject, and it is flagged as paid twice", async () => {
    const group = `group-${Math.random()}`;
    const first = await createPayment(opened, { state: "paid", groupId: group, shopifyOutcome: "resolved" });
    const { payment, message } = await paidWithResolve({ groupId: group });
    answer = refusedWithoutSession("Another payment session of this checkout has already been resolved.");
    answers = { PaymentSessionReject: rejected(payment.gid) };

    expect(await deliverNow(deps(), message.id)).toBe("done");
    expect(sent).toEqual(["PaymentSessionResolve", "PaymentSessionReject"]);
    const after = await opened.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(after).toMatchObject({ state: "paid", shopifyOutcome: "rejected", shopifyState: "REJECTED", attention: "paid_twice", attentionResolvedAt: null });
    expect(after.attentionDetail).toContain(`(Shopify payment ${first.shopifyPaymentId}) was already accepted, so the shopper paid twice`);
    const events = await opened.db.paymentEvent.findMany({ where: { paymentId: payment.id }, select: { type: true, detail: true } });
    expect(events).toEqual([{ type: "shopify_rejected", detail: expect.stringContaining(`"paidTwice":"${first.shopifyPaymentId}"`) }]);
    expect(await opened.db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } })).toMatchObject({ status: "done", kind: "payment.resolve" });
  });

  it("a resolve Shopify refused because the checkout's other payment was accepted a moment before the app recorded it: rejected on the spot once recorded, or tried again while it is on its way", async () => {
    const group = `group-${Math.random()}`;
    // The other payment's resolve is still queued (on its way): Shopify may have taken it already.
    const { payment: other, message: othersResolve } = await paidWithResolve({ groupId: group });
    const { payment, message } = await paidWithResolve({ groupId: group });
    answer = refusedWithoutSession("Another payment session of this checkout has already been resolved.");

    expect(await deliverNow(deps(), message.id)).toBe("retry");
    expect(sent).toEqual(["PaymentSessionResolve"]);
    expect(await opened.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: null, shopifyOutcome: null });
    const waiting = await opened.db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } });
    expect(waiting).toMatchObject({ status: "pending", attempts: 1, lockedBy: null });

    // The other payment's resolve is recorded; the next attempt, refused again, rejects this one.
    await opened.db.payment.update({ where: { id: other.id }, data: { shopifyOutcome: "resolved" } });
    await opened.db.outboxMessage.update({ where: { id: othersResolve.id }, data: { status: "done" } });
    at = new Date(waiting.nextAttemptAt.getTime() + 1);
    sent = [];
    answers = { PaymentSessionReject: rejected(payment.gid) };
    expect(await deliverNow(deps(), message.id)).toBe("done");
    expect(sent).toEqual(["PaymentSessionResolve", "PaymentSessionReject"]);
    expect(await opened.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ shopifyOutcome: "rejected", attention: "paid_twice" });
  });

  it("a resolve refused when the checkout's other payment was resolved meanwhile: the reject goes at once, in the same delivery", async () => {
    const group = `group-${Math.random()}`;
    const first = await createPayment(opened, { state: "paid", groupId: group });
    const { payment, message } = await paidWithResolve({ groupId: group });
    // Shopify refuses the resolve: the first payment was resolved (by another instance) while this call was on its way.
    answers = { PaymentSessionReject: rejected(payment.gid) };
    answer = refusedWithoutSession("Another payment session of this checkout has already been resolved.");
    const refusing = deps();
    const forShop = refusing.shopify.forShop.bind(refusing.shopify);
    refusing.shopify.forShop = async (shop) => {
      const client = await forShop(shop);
      return client && {
        ...client,
        resolvePaymentSession: async (gid) => {
          const result = await client.resolvePaymentSession(gid);
          await opened.db.payment.update({ where: { id: first.id }, data: { shopifyOutcome: "resolved" } });
          return result;
        },
      };
    };

    expect(await deliverNow(refusing, message.id)).toBe("done");
    expect(sent).toEqual(["PaymentSessionResolve", "PaymentSessionReject"]);
    expect(await opened.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ shopifyOutcome: "rejected", attention: "paid_twice" });
  });

  it("a paid-twice reject Shopify refuses: flagged with the paid-twice note and Shopify's words, not recorded as resolved or rejected", async () => {
    const group = `group-${Math.random()}`;
    const first = await createPayment(opened, { state: "paid", groupId: group, shopifyOutcome: "resolved" });
    const { payment, message } = await paidWithResolve({ groupId: group });
    answer = refusedWithoutSession("Another payment session of this checkout has already been resolved.");
    answers = { PaymentSessionReject: { status: 200, body: { data: { paymentSessionReject: { paymentSession: null, userErrors: [{ field: ["id"], message: "Payment session not found" }] } } } } };

    expect(await deliverNow(deps(), message.id)).toBe("failed");
    const after = await opened.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(after).toMatchObject({ attention: "shopify_error", attentionResolvedAt: null, shopifyOutcome: null, finalizedAt: null });
    expect(after.attentionDetail).toContain(`(Shopify payment ${first.shopifyPaymentId}) was already accepted, so the shopper paid twice`);
    expect(after.attentionDetail).toContain("Payment session not found");
    const events = await opened.db.paymentEvent.findMany({ where: { paymentId: payment.id }, select: { type: true } });
    expect(events.map((event) => event.type)).toEqual(["shopify_refused"]);
    expect(await opened.db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } })).toMatchObject({ status: "failed" });
  });

  it("an 'already resolved' refusal without the session is a refusal the merchant sees, even with no other payment of the checkout", async () => {
    const { payment, message } = await paidWithResolve();
    answer = refusedWithoutSession("Payment session has already been resolved");

    expect(await deliverNow(deps(), message.id)).toBe("failed");
    const after = await opened.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(after).toMatchObject({ attention: "shopify_error", shopifyOutcome: null });
    expect(after.attentionDetail).toBe(
      "The crypto was received at the gateway, but Shopify did not mark this payment paid. Shopify refused the payment session update: Payment session has already been resolved. Check the order in Shopify: if it is not to be paid, the crypto is the shopper's, to refund from the gateway dashboard.",
    );
  });

  it("a refused resolve of a payment flagged as overpaid takes the flag's place, saying the crypto was received", async () => {
    const { payment, message } = await paidWithResolve({ attention: "overpaid", attentionDetail: "0.001 BTC more arrived than was due." });
    answer = refusedWithoutSession("Payment session not found");

    expect(await deliverNow(deps(), message.id)).toBe("failed");
    const after = await opened.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(after).toMatchObject({ attention: "shopify_error", attentionResolvedAt: null, shopifyOutcome: null });
    expect(after.attentionDetail).toMatch(/^The crypto was received at the gateway, but Shopify did not mark this payment paid\. .*Payment session not found\. Check the order in Shopify/);
  });

  it("two paid payments of one checkout whose resolves Shopify both refuses do not wait for each other: each is flagged", async () => {
    const group = `group-${Math.random()}`;
    const first = await paidWithResolve({ groupId: group });
    const second = await paidWithResolve({ groupId: group });
    // A third session (another payment method) completed the checkout: Shopify refuses both.
    answer = refusedWithoutSession("Another payment session of this checkout has already been resolved.");

    // The first waits once for the second, which may have been taken a moment ago.
    expect(await deliverNow(deps(), first.message.id)).toBe("retry");
    // The second, refused while the first waits on it, waits for nothing: it is flagged.
    expect(await deliverNow(deps(), second.message.id)).toBe("failed");
    // And the first, tried again, finds nothing on its way any more.
    at = new Date((await opened.db.outboxMessage.findUniqueOrThrow({ where: { id: first.message.id } })).nextAttemptAt.getTime() + 1);
    expect(await deliverNow(deps(), first.message.id)).toBe("failed");
    for (const { payment } of [first, second]) {
      expect(await opened.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "shopify_error", attentionResolvedAt: null, shopifyOutcome: null });
    }
  });

  it("a Retry-After of a year waits the outbox's cap, unflagged", async () => {
    const { payment, message } = await paidWithResolve();
    answer = { status: 429, headers: { "Retry-After": String(365 * 86_400) }, body: { errors: "Exceeded 2 calls per second for api client." } };

    expect(await deliverNow(deps(), message.id)).toBe("retry");
    const stored = await opened.db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } });
    expect(stored.nextAttemptAt.getTime() - at.getTime()).toBe(CAP_MS);
    expect(await opened.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: null });
  });

  it("a cost-limit wait from a tiny restore rate waits the outbox's cap", async () => {
    const { message } = await paidWithResolve();
    answer = {
      status: 200,
      body: {
        errors: [{ message: "Throttled", extensions: { code: "THROTTLED" } }],
        extensions: { cost: { requestedQueryCost: 10, throttleStatus: { currentlyAvailable: 0, restoreRate: 1e-9 } } },
      },
    };

    expect(await deliverNow(deps(), message.id)).toBe("retry");
    const stored = await opened.db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } });
    expect(stored.nextAttemptAt.getTime() - at.getTime()).toBe(CAP_MS);
  });

  it("the merchant's Check now does not hurry a call waiting out the wait Shopify asked for, but does one waiting out the app's own backoff", async () => {
    const { payment, message } = await paidWithResolve();
    answer = { status: 429, headers: { "Retry-After": "120" }, body: { errors: "Exceeded 2 calls per second for api client." } };
    expect(await deliverNow(deps(), message.id)).toBe("retry");

    answer = resolved(payment.gid);
    at = new Date(at.getTime() + 119_000);
    expect(await retryFinalCallNow(deps(), payment.id)).toBe("held");
    expect(sent).toEqual(["PaymentSessionResolve"]);
    expect((await opened.db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } })).status).toBe("pending");

    // Once the wait is over the press sends it, though the app's own backoff (with its jitter) may still run.
    at = new Date(at.getTime() + 1_000);
    expect(await retryFinalCallNow(deps(), payment.id)).toBe("done");
    expect(sent).toEqual(["PaymentSessionResolve", "PaymentSessionResolve"]);

    // A call that failed otherwise (Shopify's 500) waits out the app's backoff only: the press sends it at once.
    const other = await paidWithResolve();
    answer = { status: 500, body: { errors: "Internal error" } };
    expect(await deliverNow(deps(), other.message.id)).toBe("retry");
    answer = resolved(other.payment.gid);
    expect(await retryFinalCallNow(deps(), other.payment.id)).toBe("done");
  });

  it("a Retry-After within the cap is still obeyed in full", async () => {
    const { message } = await paidWithResolve();
    answer = { status: 429, headers: { "Retry-After": "120" }, body: { errors: "Exceeded 2 calls per second for api client." } };

    expect(await deliverNow(deps(), message.id)).toBe("retry");
    const stored = await opened.db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } });
    expect(stored.nextAttemptAt.getTime() - at.getTime()).toBe(120_000);
  });
});
