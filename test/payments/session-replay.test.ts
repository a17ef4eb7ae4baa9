// A payment session id Shopify delivers again, through the real app, the Shopify stand-in, the
// gateway sandbox and a stand-in for the live gateway: the same session (its amount perhaps
// written another way) gets exactly the first answer; another session's details under the id
// (a real checkout for a test one, another amount, currency, kind or gid) are refused with
// nothing stored, never answered with the first session's order; and a real session whose
// first attempt stored no answer is declined, with no live order, once the shop's test mode
// is on, while one already answered keeps its answer.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LiveGatewayStandin } from "../support/live-gateway";
import { startStackWithLiveGateway } from "../support/live-gateway";
import { paymentColumns } from "../support/payment-rows";
import { sendPaymentSession, type Stack } from "../support/stack";

let stack: Stack;
let live: LiveGatewayStandin;

beforeAll(async () => {
  ({ stack, live } = await startStackWithLiveGateway({ workers: false }));
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await live?.close();
});

const db = () => stack.services.db;

async function post(body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await sendPaymentSession(stack, body);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The payment recorded for a session, with its timeline: what a refused repeat must leave as it was. */
async function recorded(shopifyPaymentId: string) {
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId }, include: { events: { orderBy: { id: "asc" } } } });
  return JSON.stringify(payment);
}

async function withTestMode<T>(work: () => Promise<T>): Promise<T> {
  await db().shop.update({ where: { shopDomain: stack.shopDomain }, data: { testMode: true } });
  try {
    return await work();
  } finally {
    await db().shop.update({ where: { shopDomain: stack.shopDomain }, data: { testMode: false } });
  }
}

describe("the same session delivered again", () => {
  it("gets exactly the first answer, its amount written as sent or another way", async () => {
    const euros = stack.standin.state.createPaymentSession({ test: true, amount: "49.90", currency: "EUR" });
    const first = await post(euros.request);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(String(first.body.redirect_url)).toMatch(new RegExp(`^${stack.sandbox.origin}/pay/`));
    const before = await recorded(euros.id);
    for (const amount of ["49.90", "49.9", "49.900000"]) {
      expect(await post({ ...euros.request, amount }), amount).toEqual(first);
    }
    expect(await recorded(euros.id)).toBe(before);

    // Stored in the fiat's own digits (JPY has none): "5000.00" is the same amount.
    const yen = stack.standin.state.createPaymentSession({ test: true, amount: "5000.00", currency: "JPY" });
    const inYen = await post(yen.request);
    expect(inYen.status, JSON.stringify(inYen.body)).toBe(200);
    expect(await post({ ...yen.request, amount: "5000" })).toEqual(inYen);
  });
});

describe("another session's details under a session id already used", () => {
  it("are refused (409 session_mismatch) with nothing stored or sent, and the first session's retry still gets its answer", async () => {
    const session = stack.standin.state.createPaymentSession({ test: true, amount: "49.90", currency: "EUR", kind: "sale" });
    const first = await post(session.request);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const before = await recorded(session.id);
    const liveOrders = live.orders.length;
    const otherGid = `gid://shopify/PaymentSession/${randomUUID().replace(/-/g, "")}`;
    const variants: [string, Record<string, unknown>][] = [
      // A real checkout must never be sent to the sandbox's page, whose controls mark an order paid.
      ["test flag", { test: false }],
      ["amount", { amount: "999.00" }],
      ["amount", { amount: "49.91" }],
      ["currency", { currency: "USD" }],
      // A currency the gateway does not take is refused before the id is looked up: the same answer.
      ["currency", { currency: "VND" }],
      ["kind", { kind: "authorization" }],
      ["gid", { gid: otherGid }],
    ];
    for (const [differs, change] of variants) {
      const repeat = await post({ ...session.request, ...change });
      expect({ change, status: repeat.status, body: repeat.body }).toEqual({
        change,
        status: 409,
        body: { error: "session_mismatch", message: `This payment session id was already used with a different ${differs}; it is not started again.` },
      });
    }
    expect(await recorded(session.id)).toBe(before);
    expect(live.orders.length).toBe(liveOrders);
    expect(await post(session.request)).toEqual(first);
  });

  it("as a real checkout of a shop in test mode: refused as another session's, not answered with the test session's page", async () => {
    const session = stack.standin.state.createPaymentSession({ test: true });
    const first = await post(session.request);
    expect(first.status).toBe(200);
    await withTestMode(async () => {
      expect((await post({ ...session.request, test: false })).body).toMatchObject({ error: "session_mismatch" });
      expect(await post(session.request)).toEqual(first);
    });
  });
});

describe("a real session retried after the shop's test mode was turned on", () => {
  it("whose first attempt stored no answer (a 503 released it) is declined 422 test_mode and sends no live order; its retries get that answer", async () => {
    const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
    const session = stack.standin.state.createPaymentSession({ test: false });
    const request = session.request as unknown as Record<string, string>;
    // What a first attempt answered 503 gateway_busy leaves: the record, released, with no order requested.
    await db().payment.create({
      data: paymentColumns(shop.id, {
        shopifyPaymentId: session.id,
        gid: session.gid,
        groupId: session.group,
        amount: request.amount!,
        currency: request.currency!,
        kind: request.kind!,
        test: false,
        gatewayEnv: "live",
        state: "started",
        orderRequestedAt: null,
      }),
    });
    const liveOrders = live.orders.length;
    await withTestMode(async () => {
      const declined = await post(session.request);
      expect({ status: declined.status, body: declined.body, liveOrdersSent: live.orders.length - liveOrders }).toEqual({
        status: 422,
        body: { error: "test_mode", message: "The shop's crypto payments are in test mode: only Shopify test orders are accepted." },
        liveOrdersSent: 0,
      });
      expect(await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } })).toMatchObject({ state: "not_started", responseStatus: 422, sessionClaimToken: null });
      expect(await post(session.request)).toEqual(declined);
    });
    // The session was answered: turning test mode off again does not start it.
    expect((await post(session.request)).status).toBe(422);
    expect(live.orders.length).toBe(liveOrders);
  });

  it("whose first attempt was answered keeps that answer", async () => {
    const session = stack.standin.state.createPaymentSession({ test: false });
    const first = await post(session.request);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(live.orders.length).toBeGreaterThan(0);
    const liveOrders = live.orders.length;
    await withTestMode(async () => {
      expect(await post(session.request)).toEqual(first);
      // A new real session is declined meanwhile.
      expect((await post(stack.standin.state.createPaymentSession({ test: false }).request)).body).toMatchObject({ error: "test_mode" });
    });
    expect(live.orders.length).toBe(liveOrders);
  });
});
