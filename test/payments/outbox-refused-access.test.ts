// A payment's call that Shopify forbids (HTTP 403: the app's access lacks a permission the
// merchant must grant) is kept and tried again, since a paid resolve must not be lost, and
// the merchant is told at once: the payment is flagged with Shopify's reason and the health
// page lists the call. A passing blip (HTTP 500) flags nothing. Once Shopify takes the call,
// the flag is closed, and the merchant's Check now sends it at once instead of after its backoff.
// A refused call stays on the health page, red only until it is dealt with.
import { expect, it } from "vitest";
import { shopHealth } from "../../app/admin/health.server";
import { currentFlag, markAttentionHandled } from "../../app/admin/payments.server";
import { flagColumns, type AttentionFlag } from "../../app/payments/attention-flags";
import type { AttentionReason } from "../../app/payments/status-mapping";
import { checkPaymentNow } from "../../app/payments/check-payment";
import { deliverNow, enqueue, finalMessageKey } from "../../app/payments/outbox";
import { connectSandbox } from "../../app/shops/onboarding.server";
import { postAdminForm } from "../support/admin-pages";
import { paymentColumns } from "../support/payment-rows";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });

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

it("the merchant's Check now sends a refused resolve again at once, once the permission is granted; the shopper's page never hurries it", async () => {
  const { services, standin, shopDomain } = stack();
  const { session, payment, message, deliverWhenDue } = await paymentWithResolve();
  // Refused a few times: the next attempt is minutes away.
  standin.state.setFault({ mode: "http_403", count: 4 });
  for (let i = 0; i < 4; i++) expect(await deliverWhenDue()).toBe("retry");
  const waiting = await services.db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } });
  expect(waiting.nextAttemptAt.getTime()).toBeGreaterThan(Date.now() + 5_000);
  const shop = await services.db.shop.findUniqueOrThrow({ where: { shopDomain } });

  // The shopper's page checks the order: the call keeps waiting.
  const shopperCheck = await checkPaymentNow(services, shop.id, payment.id);
  expect(shopperCheck).toMatchObject({ ok: true, shopify: null });
  expect(standin.state.session(session.id)?.state.code).not.toBe("RESOLVED");

  // The permission is granted (no fault left) and the merchant presses Check now on the payment's
  // page: the call goes at once, whether the gateway is read again or the shopper's read a moment
  // ago stands for it (within the spacing, which a slow first render of the page may outlast).
  const merchantCheck = await postAdminForm(stack(), `/app/payments/${payment.id}`, { intent: "check" });
  expect(merchantCheck.status).toBe(200);
  expect(merchantCheck.text).toContain("Shopify took the payment's outcome.");
  expect(standin.state.session(session.id)?.state.code).toBe("RESOLVED");
  const resolved = await services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(resolved).toMatchObject({ shopifyOutcome: "resolved", attention: "shopify_error" });
  expect(resolved.attentionResolvedAt).not.toBeNull();
  // Nothing left to send: a further check makes no Shopify call.
  const calls = standin.state.operationsFor(session.id).length;
  expect(await checkPaymentNow(services, shop.id, payment.id, { retryShopify: true })).toMatchObject({ ok: true, shopify: null });
  expect(standin.state.operationsFor(session.id)).toHaveLength(calls);
});

it("the health page counts a refused call as open until it is dealt with: its payment's flag marked handled, or a later readiness call delivered; one for no payment stays open", async () => {
  const { services } = stack();
  const shopDomain = "health-refusals.myshopify.com";
  expect((await connectSandbox(services, shopDomain)).ok).toBe(true);
  const shop = await services.db.shop.findUniqueOrThrow({ where: { shopDomain } });
  const flaggedPayment = (handled: boolean) =>
    services.db.payment.create({ data: paymentColumns(shop.id, { state: "paid", attention: "shopify_error", attentionDetail: "Shopify refused the call.", attentionResolvedAt: handled ? new Date() : null }) });
  const [open, handled] = [await flaggedPayment(false), await flaggedPayment(true)];
  // Only the refusals; whatever the connection enqueued is delivered and counted apart.
  await services.db.outboxMessage.updateMany({ where: { shopDomain }, data: { status: "done" } });
  const at = (minutes: number) => new Date(Date.now() - (60 - minutes) * 60_000);
  const refused = (dedupeKey: string, kind: string, paymentId: string | null, createdAt: Date, status = "failed") =>
    services.db.outboxMessage.create({ data: { shopDomain, paymentId, kind, dedupeKey, payload: "{}", status, lastError: "Shopify said no.", createdAt } });
  await refused("refused-open", "payment.resolve", open.id, at(1));
  await refused("refused-handled", "payment.resolve", handled.id, at(2));
  await refused("refused-payment-gone", "payment.reject", "no-such-payment", at(3));
  await refused("readiness-refused-before", "app.configure", null, at(4));
  await refused("readiness-delivered", "app.configure", null, at(5), "done");
  await refused("readiness-refused-after", "app.configure", null, at(6));
  // The answer to a void of a payment the app does not know: nothing else tells anyone.
  await refused("refused-unknown-payment", "void.reject", null, at(7));

  const health = await shopHealth(services, shop);
  expect(health).toMatchObject({ outboxFailedCount: 3, outboxFailedHandledCount: 3 });
  const handledById = Object.fromEntries(health.outboxFailed.map((m) => [m.id, m.handled]));
  const ids = Object.fromEntries((await services.db.outboxMessage.findMany({ where: { shopDomain, status: "failed" } })).map((m) => [m.dedupeKey, m.id]));
  expect(handledById).toEqual({
    [ids["refused-open"]!]: false,
    [ids["refused-handled"]!]: true,
    [ids["refused-payment-gone"]!]: true,
    [ids["readiness-refused-before"]!]: true,
    [ids["readiness-refused-after"]!]: false,
    [ids["refused-unknown-payment"]!]: false,
  });

  // The merchant marks the open one handled: nothing about a payment is left red.
  await services.db.payment.update({ where: { id: open.id }, data: { attentionResolvedAt: new Date() } });
  expect(await shopHealth(services, shop)).toMatchObject({ outboxFailedCount: 2, outboxFailedHandledCount: 4 });

  // However many payments are flagged, the page is one statement's work.
  await services.db.payment.createMany({
    data: Array.from({ length: 1_500 }, () => paymentColumns(shop.id, { state: "paid", attention: "late_payment", attentionDetail: "Crypto arrived late." })),
  });
  expect(await shopHealth(services, shop)).toMatchObject({ outboxFailedCount: 2, outboxFailedHandledCount: 4 });
});

it("a refusal whose flag was marked handled stays handled when a flag for something else is raised later; one whose flag was never handled does not", async () => {
  const { services } = stack();
  const shopDomain = "health-refusals-later-flags.myshopify.com";
  expect((await connectSandbox(services, shopDomain)).ok).toBe(true);
  const shop = await services.db.shop.findUniqueOrThrow({ where: { shopDomain } });
  await services.db.outboxMessage.updateMany({ where: { shopDomain }, data: { status: "done" } });
  const refusedFor = async (flag: { attention: AttentionReason; attentionDetail: string }) => {
    const payment = await services.db.payment.create({ data: paymentColumns(shop.id, { state: "paid", ...flag }) });
    const message = await services.db.outboxMessage.create({
      data: { shopDomain, paymentId: payment.id, kind: "payment.resolve", dedupeKey: `refused-${payment.id}`, payload: "{}", status: "failed", lastError: "Shopify said no." },
    });
    return { payment, message };
  };
  const markHandled = async (paymentId: string) => {
    const payment = await services.db.payment.findUniqueOrThrow({ where: { id: paymentId } });
    expect(await markAttentionHandled(services.db, shop.id, paymentId, await currentFlag(services.db, payment), new Date())).toBe("handled");
  };
  const raise = (paymentId: string, flag: AttentionFlag) => services.db.payment.update({ where: { id: paymentId }, data: flagColumns(flag) });
  const handledOf = async (messageId: string) => (await shopHealth(services, shop)).outboxFailed.find((m) => m.id === messageId)?.handled;

  // The refusal flagged its payment; the merchant handled it. Crypto arrives late weeks on.
  const own = await refusedFor({ attention: "shopify_error", attentionDetail: "Shopify refused the call." });
  await markHandled(own.payment.id);
  expect(await handledOf(own.message.id)).toBe(true);
  await raise(own.payment.id, { reason: "late_payment", detail: "Crypto arrived late." });
  expect(await handledOf(own.message.id)).toBe(true);

  // The refusal came while a flag about the money was open, which the merchant handled: the
  // refusal's own was never handled, and a later flag keeps it open.
  const shadowed = await refusedFor({ attention: "overpaid", attentionDetail: "The shopper sent more than asked." });
  await markHandled(shadowed.payment.id);
  await raise(shadowed.payment.id, { reason: "late_payment", detail: "Crypto arrived late." });
  expect(await handledOf(shadowed.message.id)).toBe(false);
  expect((await shopHealth(services, shop)).outboxFailedCount).toBe(1);
});
