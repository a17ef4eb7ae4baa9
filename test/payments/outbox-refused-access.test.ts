// A payment's call that Shopify forbids (HTTP 403: the app's access lacks a permission the
// merchant must grant) is kept and tried again, since a paid resolve must not be lost, and
// the merchant is told at once: the payment is flagged with Shopify's reason and the health
// page lists the call. A passing blip (HTTP 500) flags nothing. Once Shopify takes the call,
// the flag is closed.
import { expect, it } from "vitest";
import { shopHealth } from "../../app/admin/health.server";
import { deliverNow, enqueue, finalMessageKey } from "../../app/payments/outbox";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });

async function paymentWithResolve() {
  const { services, standin, shopDomain } = stack();
  const { session } = await standin.state.startPayment({ test: true });
  const payment = await services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  const message = await services.db.$transaction((tx) =>
    enqueue(tx, { shopDomain, paymentId: payment.id, dedupeKey: finalMessageKey(payment.id), payload: { kind: "payment.resolve", gid: payment.gid }, now: new Date() }),
  );
  /** Delivers the message now, as the worker will once its backoff is over. */
  const deliverWhenDue = async () => {
    await services.db.outboxMessage.update({ where: { id: message.id }, data: { nextAttemptAt: new Date() } });
    return deliverNow(services, message.id);
  };
  return { session, payment, message, deliverWhenDue };
}

const refusals = async (paymentId: string) =>
  (await stack().services.db.paymentEvent.findMany({ where: { paymentId, type: "shopify_refused" } })).map((event) => JSON.parse(event.detail) as Record<string, unknown>);

it("a forbidden resolve is retried, flags the payment once and is listed on the health page; delivered later, the flag is closed", async () => {
  const { services, standin, shopDomain } = stack();
  const { session, payment, message, deliverWhenDue } = await paymentWithResolve();
  standin.state.setFault({ mode: "http_403", count: 3 });

  expect(await deliverWhenDue()).toBe("retry");
  const flagged = await services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(flagged).toMatchObject({ attention: "shopify_error", attentionResolvedAt: null, shopifyOutcome: null });
  expect(flagged.attentionDetail).toContain("Shopify refused the call, so this payment's outcome has not reached Shopify");
  expect(flagged.attentionDetail).toContain("HTTP 403");
  expect(flagged.attentionDetail).toContain("permission");
  expect(await services.db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } })).toMatchObject({ status: "pending", attempts: 1, lockedBy: null });

  // The next attempts keep the one flag and its one timeline entry.
  expect(await deliverWhenDue()).toBe("retry");
  expect(await deliverWhenDue()).toBe("retry");
  expect(await refusals(payment.id)).toEqual([expect.objectContaining({ call: "payment.resolve", retrying: true })]);
  const shop = await services.db.shop.findUniqueOrThrow({ where: { shopDomain } });
  const health = await shopHealth(services, shop);
  expect(health.outboxRetrying).toEqual([expect.objectContaining({ id: message.id, kind: "payment.resolve", attempts: 3, lastError: expect.stringContaining("HTTP 403") })]);
  expect(health.outboxFailedCount).toBe(0);

  // The merchant grants the permission: the next attempt goes through and closes the flag.
  expect(await deliverWhenDue()).toBe("done");
  const delivered = await services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(delivered).toMatchObject({ shopifyOutcome: "resolved", attention: "shopify_error" });
  expect(delivered.attentionResolvedAt).not.toBeNull();
  expect(standin.state.session(session.id)?.state.code).toBe("RESOLVED");
  expect((await shopHealth(services, shop)).outboxRetrying).toEqual([]);
});

it("a passing failure (HTTP 500) is retried without a flag", async () => {
  const { services, standin } = stack();
  const { session, payment, deliverWhenDue } = await paymentWithResolve();
  standin.state.setFault({ mode: "http_500", count: 1 });

  expect(await deliverWhenDue()).toBe("retry");
  expect(await services.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: null });
  expect(await deliverWhenDue()).toBe("done");
  expect(await refusals(payment.id)).toEqual([]);
  expect(standin.state.session(session.id)?.state.code).toBe("RESOLVED");
});

it("an open flag about the money is kept: the refused call does not replace its advice", async () => {
  const { services, standin } = stack();
  const { payment, deliverWhenDue } = await paymentWithResolve();
  await services.db.payment.update({ where: { id: payment.id }, data: { attention: "late_payment", attentionDetail: "Crypto arrived after the rejection." } });
  standin.state.setFault({ mode: "http_403", count: 1 });

  expect(await deliverWhenDue()).toBe("retry");
  expect(await services.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "late_payment", attentionDetail: "Crypto arrived after the rejection." });
  expect(await refusals(payment.id)).toEqual([]);
  expect(await deliverWhenDue()).toBe("done");
  expect(await services.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "late_payment", attentionResolvedAt: null });
});
