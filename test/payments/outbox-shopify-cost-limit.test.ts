// A burst of payment outcomes for one shop against Shopify's cost limit. The stand-in keeps
// Shopify's leaky bucket (here 100 points, 100 a second back, 10 points a call): the app's
// workers deliver 40 resolves due at once, more than the bucket pays for, so Shopify throttles
// some. Every payment is resolved in Shopify exactly once all the same, and none is flagged for
// the merchant: a throttled call is tried again once the bucket has filled, as the answer's
// throttle status says.
import { describe, expect, it } from "vitest";
import { enqueue, finalMessageKey } from "../../app/payments/outbox";
import { ensureShop } from "../../app/shops/shop-credentials.server";
import { paymentColumns } from "../support/payment-rows";
import { stackForFile, waitFor } from "../support/stack";

const PAYMENTS = 40;
const stack = stackForFile({ shopifyCostLimit: { maximumAvailable: 100, restoreRate: 100 } });

describe("payment outcomes in a burst against Shopify's cost limit", () => {
  it("are each delivered once, the throttled ones when the bucket has filled again", async () => {
    const { services, standin, shopDomain } = stack();
    const shop = await ensureShop(services.db, shopDomain);
    const sessions = Array.from({ length: PAYMENTS }, () => standin.state.createPaymentSession({ test: true, kind: "sale" }));
    const now = new Date();
    await services.db.$transaction(async (tx) => {
      for (const session of sessions) {
        const payment = await tx.payment.create({
          data: paymentColumns(shop.id, { shopifyPaymentId: session.id, gid: session.gid, groupId: session.group, amount: session.request.amount, currency: session.request.currency, state: "paid", gatewayStatus: "CO" }),
        });
        await enqueue(tx, { shopDomain, paymentId: payment.id, dedupeKey: finalMessageKey(payment.id), payload: { kind: "payment.resolve", gid: payment.gid }, now });
      }
    });
    services.notify?.outbox();
    await waitFor(async () => sessions.every((s) => standin.state.session(s.id)?.state.code === "RESOLVED"), "every session resolved", 60_000);

    const operations = standin.state.operations();
    // The burst went over the limit: Shopify throttled calls, with its bucket's figures.
    const throttled = operations.filter((o) => o.fault === "throttled");
    expect(throttled.length).toBeGreaterThan(0);
    expect(throttled[0]!.answer).toMatchObject({ errors: [{ extensions: { code: "THROTTLED" } }], extensions: { cost: { throttleStatus: { maximumAvailable: 100, restoreRate: 100 } } } });
    const resolves = operations.filter((o) => o.operationName === "PaymentSessionResolve" && o.fault === null);
    for (const session of sessions) expect(resolves.filter((o) => o.sessionIds.includes(session.gid)), session.id).toHaveLength(1);
    expect(resolves).toHaveLength(PAYMENTS);

    await waitFor(async () => (await services.db.outboxMessage.count({ where: { shopDomain, status: "pending" } })) === 0, "the outbox emptied");
    expect(await services.db.outboxMessage.count({ where: { shopDomain, status: { not: "done" } } })).toBe(0);
    expect(await services.db.payment.count({ where: { shopId: shop.id, attention: { not: null } } })).toBe(0);
    expect(await services.db.payment.count({ where: { shopId: shop.id, shopifyOutcome: "resolved" } })).toBe(PAYMENTS);
  }, 90_000);
});
