// A gateway that makes an order for other terms than the app asked (another fiat: it fell back
// to the device's default), through the real app, Shopify's stand-in and a stand-in for the live
// gateway: the shopper is never sent to pay it. A payment session is refused for good (422,
// nothing to retry), whether the order came from the creation's answer or was found again by
// its reference after an answer was lost; a coin picked on the app's own page is refused, the
// payment flagged for the merchant, and a second pick creates no other order. And through the
// gateway sandbox: once a read found a payment's order for other terms, the gateway's signed
// notification of it is not taken at its word, and the order is read.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOrderWithCurrency } from "../../app/payments/start-payment-session";
import type { Prisma } from "../../generated/prisma/sqlite/client";
import { startStackWithLiveGateway, type LiveGatewayStandin } from "../support/live-gateway";
import { paymentColumns } from "../support/payment-rows";
import { paymentThrough, sendPaymentSession, stackForFile, waitFor, type Stack } from "../support/stack";

describe("a live gateway that makes the order in another fiat", () => {
  let stack: Stack;
  let live: LiveGatewayStandin;
  beforeAll(async () => {
    ({ stack, live } = await startStackWithLiveGateway({ workers: false }));
    live.forcedFiat = "MXN";
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await live?.close();
  });
  const db = () => stack.services.db;

  /** The payment row of a real session, started (no order made yet), as the app stores one. */
  async function startedLivePayment(session: ReturnType<Stack["standin"]["state"]["createPaymentSession"]>, columns: Partial<Prisma.PaymentUncheckedCreateInput> = {}) {
    const { id: shopId } = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
    const { request } = session;
    return db().payment.create({
      data: paymentColumns(shopId, {
        shopifyPaymentId: session.id,
        gid: session.gid,
        groupId: session.group,
        amount: request.amount,
        currency: request.currency,
        kind: request.kind,
        test: false,
        gatewayEnv: "live",
        state: "started",
        cancelUrl: request.payment_method.data.cancel_url,
        ...columns,
      }),
    });
  }

  async function post(body: unknown) {
    const response = await sendPaymentSession(stack, body);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  it("refuses the payment session for good, and its retry gets the same answer without another order", async () => {
    const session = stack.standin.state.createPaymentSession({ test: false, amount: "49.90", currency: "EUR" });
    const ordersBefore = live.orders.length;
    const first = await post(session.request);
    expect(first).toEqual({
      status: 422,
      body: { error: "gateway_order_mismatch", message: "The gateway made the order for another amount or currency than the payment's; the payment cannot be taken." },
    });
    expect(live.orders.length).toBe(ordersBefore + 1);
    expect(live.orders.at(-1)).toMatchObject({ expected_output_amount: 49.9, fiat: "EUR" });
    const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id }, include: { events: true } });
    expect(payment).toMatchObject({ state: "not_started", gatewayOrderId: null, gatewayEnv: "live" });
    const refused = payment.events.find((e) => e.type === "session_refused");
    expect(JSON.parse(refused!.detail!)).toMatchObject({ status: 422, reason: "order_terms_mismatch", cause: "The gateway order is in MXN, but Shopify's payment is for 49.90 EUR." });

    expect(await post(session.request)).toEqual(first);
    expect(live.orders.length).toBe(ordersBefore + 1);
  });

  it("refuses the session when the order its first attempt made is found again by its reference", async () => {
    const session = stack.standin.state.createPaymentSession({ test: false, amount: "20.00", currency: "EUR" });
    // The first attempt sent the order and never learnt the answer.
    const payment = await startedLivePayment(session, { orderRequestedAt: new Date(Date.now() - 60_000) });
    const made = await fetch(`${live.baseUrl}/orders/`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ expected_output_amount: 20, fiat: "EUR", reference: session.id, internal_data: JSON.stringify({ payment: payment.id }) }),
    });
    expect(made.status).toBe(200);
    const ordersBefore = live.orders.length;

    const retried = await post(session.request);
    expect(retried).toMatchObject({ status: 422, body: { error: "gateway_order_mismatch" } });
    expect(live.orders.length).toBe(ordersBefore);
    expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ state: "not_started", gatewayOrderId: null });
  });

  it("refuses a coin picked on the app's own page, flags the payment, and a second pick makes no other order", async () => {
    const session = stack.standin.state.createPaymentSession({ test: false, amount: "35.00", currency: "EUR" });
    const payment = await startedLivePayment(session);
    const ordersBefore = live.orders.length;
    const picked = await createOrderWithCurrency(stack.services, payment.id, "BTC");
    expect(picked).toEqual({ ok: false, reason: "cannot_take_crypto", message: "This payment cannot be taken in crypto: go back to the checkout and choose another payment method." });
    expect(live.orders.length).toBe(ordersBefore + 1);
    const flagged = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(flagged).toMatchObject({ state: "started", gatewayOrderId: null, sessionClaimToken: null, attention: "amount_mismatch", attentionResolvedAt: null });
    expect(flagged.attentionDetail).toMatch(/^The gateway order is in MXN, but Shopify's payment is for 35\.00 EUR\. Its order [0-9a-f-]{36} was not shown to the shopper\.$/);

    // A second pick, at once or once the time an order may still appear has passed, is refused
    // the same way without asking the gateway again (it would find the first pick's order by its
    // reference): nothing is looked up, made or flagged again.
    expect(await createOrderWithCurrency(stack.services, payment.id, "ETH")).toMatchObject({ ok: false, reason: "cannot_take_crypto" });
    await db().payment.update({ where: { id: payment.id }, data: { orderRequestedAt: new Date(Date.now() - 120_000) } });
    expect(await createOrderWithCurrency(stack.services, payment.id, "ETH")).toMatchObject({ ok: false, reason: "cannot_take_crypto" });
    expect(live.orders.length).toBe(ordersBefore + 1);
    expect(await db().paymentEvent.count({ where: { paymentId: payment.id, type: "attention" } })).toBe(1);
  });
});

describe("a signed notification of a payment whose order a read found for other terms", () => {
  const stack = stackForFile();

  it("is not taken at its word: the order is read, and the read settles it", async () => {
    const { payment, orderId } = await paymentThrough(stack(), [{ action: "choose_currency", currency: "ETH" }]);
    await stack().services.db.payment.update({
      where: { id: payment.id },
      data: { attention: "amount_mismatch", attentionDetail: "The gateway order is for 4.99 EUR, but Shopify's payment is for 49.90 EUR." },
    });
    await stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, { action: "pay", amount: "exact" });
    await stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, { action: "confirm" });
    const paid = await waitFor(async () => {
      const row = await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id }, include: { events: true } });
      return row.state === "paid" && row;
    }, "the payment settled");
    const toPaid = paid.events.filter((e) => e.type === "state").map((e) => JSON.parse(e.detail!) as { to: string; source: string }).find((d) => d.to === "paid");
    // "webhook": settled on the gateway's read the notification asked for, not on the notification alone ("signed_webhook").
    expect(toPaid?.source).toBe("webhook");
    expect(paid.unverifiedSince).toBeNull();
  });
});
