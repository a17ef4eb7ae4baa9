// The shopper's return when the app cannot read the order there, or need not: a shopper who
// paid is never sent back to choose another payment method on a stored "no coin yet" (NR)
// the return did not read itself; what a return to wait answers from what it holds is recent
// (a link opened again later reads); and returns at once are all answered. On SQLite and on
// PostgreSQL, where two returns race on their own connections.
import { beforeEach, describe, expect, it } from "vitest";
import { HELD_PROGRESS_FRESH_MS } from "../../app/payments/handle-return";
import { PAID_IN_FULL, paymentThrough, setWebhookFaults, stackOnDatabase, waitFor, type Stack } from "../support/stack";

describe.each(["sqlite", "postgresql"] as const)("the shopper's return on %s", (kind) => {
  let offsetMs = 0;
  const clock = { now: () => new Date(Date.now() + offsetMs) };
  const started = stackOnDatabase(kind, { clock });
  let stack: Stack;
  beforeEach(() => void (stack = started()));

  const db = () => stack.services.db;
  const act = (orderId: string, body: Record<string, unknown>) => stack.sandboxControl(`/sandbox/orders/${orderId}/actions`, body);
  const shopifyState = (sessionId: string) => stack.standin.state.session(sessionId)?.state;
  const abandonedEvents = (paymentId: string) => db().paymentEvent.count({ where: { paymentId, type: "shopper_abandoned" } });

  const webhookFaults = (mode: "drop" | "deliver") => setWebhookFaults(stack, mode);

  async function open(url: string) {
    const answer = await fetch(url, { redirect: "manual" });
    return { status: answer.status, location: answer.headers.get("location"), body: await answer.text() };
  }

  /** A payment whose coin and payment webhooks were stored; `then` runs with the later webhooks lost. */
  async function paidWithLaterWebhooksLost(then: (orderId: string) => Promise<unknown>) {
    const { session, payment, orderId } = await paymentThrough(stack, PAID_IN_FULL.slice(0, 2));
    await waitFor(async () => {
      const stored = await db().gatewayWebhook.findMany({ where: { orderId }, select: { status: true } });
      return ["PE", "AC"].every((status) => stored.some((hook) => hook.status === status)) || null;
    }, "the PE and AC webhooks stored");
    await webhookFaults("drop");
    try {
      await then(orderId);
    } finally {
      await webhookFaults("deliver");
    }
    return { session, payment, orderId };
  }

  it("a shopper sent back as paid while the order cannot be read is told pending from the signed webhooks, not sent to choose again", async () => {
    const { session, payment } = await paidWithLaterWebhooksLost((orderId) => act(orderId, { action: "confirm" }));
    await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.info", kind: "http_500", count: 20 });
    try {
      const back = await open(stack.services.links.returnUrl(payment, "ok"));
      expect(back.status).toBe(303);
      expect(back.location).not.toBe(payment.cancelUrl);
      const state = shopifyState(session.id);
      expect(state?.code === "PENDING" && state.reason).toBe("NETWORK_ACTION_REQUIRED");
      expect(await abandonedEvents(payment.id)).toBe(0);
    } finally {
      await stack.sandboxControl("/sandbox/faults", undefined, "DELETE");
    }
  }, 60_000);

  it("two returns at once as paid: one reads the order, the other is never sent to choose again", async () => {
    const { session, payment } = await paidWithLaterWebhooksLost((orderId) => act(orderId, { action: "confirm" }));
    const url = stack.services.links.returnUrl(payment, "ok");
    const answers = await Promise.all([open(url), open(url)]);
    expect(answers.map((answer) => answer.status === 303 && answer.location === payment.cancelUrl)).toEqual([false, false]);
    expect(await abandonedEvents(payment.id)).toBe(0);
    await waitFor(async () => shopifyState(session.id)?.code === "RESOLVED" || null, "the read's resolve");
  }, 60_000);

  it("with nothing held and the order unreadable, a shopper sent back as paid waits on a page that checks again", async () => {
    await webhookFaults("drop");
    try {
      const { session, payment } = await paymentThrough(stack, PAID_IN_FULL);
      // Neither read answers: by identifier, or by the shop's listing a return may make instead.
      for (const endpoint of ["orders.info", "orders.list"]) await stack.sandboxControl("/sandbox/faults", { endpoint, kind: "http_500", count: 20 });
      const back = await open(stack.services.links.returnUrl(payment, "ok"));
      expect(back.status).toBe(200);
      expect(back.body).toContain('http-equiv="refresh"');
      expect(await abandonedEvents(payment.id)).toBe(0);
      expect(shopifyState(session.id)?.code).not.toBe("PENDING");
    } finally {
      await webhookFaults("deliver");
      await stack.sandboxControl("/sandbox/faults", undefined, "DELETE");
    }
  }, 60_000);

  it("with the shop's credentials unreadable (a key dropped too early) and nothing held, a shopper the gateway's page sent back as paid waits, not sent to choose again", async () => {
    const { session, delivery } = await stack.standin.state.startPayment({ test: true });
    expect(delivery.status, delivery.body).toBe(200);
    const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
    expect(payment.gatewayStatus).toBe("NR");
    const orderId = payment.gatewayOrderId!;
    const shop = await db().shop.findUniqueOrThrow({ where: { id: payment.shopId } });
    const sealed = { sandboxDeviceKeyEnc: shop.sandboxDeviceKeyEnc!, sandboxSecretKeyEnc: shop.sandboxSecretKeyEnc! };
    const underLostKey = (value: string) => value.split(":").map((part, i) => (i === 1 ? "lost" : part)).join(":");
    await webhookFaults("drop");
    try {
      for (const step of [{ action: "choose_currency", currency: "ETH" }, { action: "pay", amount: "exact" }, { action: "confirm" }]) await act(orderId, step);
      await db().shop.update({ where: { id: shop.id }, data: { sandboxDeviceKeyEnc: underLostKey(sealed.sandboxDeviceKeyEnc), sandboxSecretKeyEnc: underLostKey(sealed.sandboxSecretKeyEnc) } });
      for (const outcome of ["ok", "standby"] as const) {
        const back = await open(stack.services.links.returnUrl(payment, outcome));
        expect({ outcome, status: back.status, location: back.location }).toEqual({ outcome, status: 200, location: null });
        expect(back.body).toContain('http-equiv="refresh"');
      }
      expect(await abandonedEvents(payment.id)).toBe(0);
    } finally {
      await db().shop.update({ where: { id: shop.id }, data: sealed });
      await webhookFaults("deliver");
    }
  }, 60_000);

  it("a return to wait opened again long after the coin was chosen reads the order: an expiry whose webhook was lost rejects the session", async () => {
    const { session, delivery } = await stack.standin.state.startPayment({ test: true });
    expect(delivery.status, delivery.body).toBe(200);
    const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
    const orderId = payment.gatewayOrderId!;
    await act(orderId, { action: "choose_currency", currency: "ETH" });
    await waitFor(async () => (await db().gatewayWebhook.count({ where: { orderId, status: "PE" } })) > 0 || null, "the PE webhook stored");
    await webhookFaults("drop");
    try {
      await act(orderId, { action: "expire" });
    } finally {
      await webhookFaults("deliver");
    }
    offsetMs += HELD_PROGRESS_FRESH_MS + 60_000;
    try {
      const back = await open(stack.services.links.returnUrl(payment, "standby"));
      expect(back.status).toBe(303);
      expect(shopifyState(session.id)?.code).toBe("REJECTED");
    } finally {
      // The gateway's webhooks carry its own time: the app's clock goes back to it.
      offsetMs = 0;
    }
  }, 60_000);

  it("returns to wait at once (a double click, a browser's retry) are all answered, and Shopify is told pending once", async () => {
    for (let round = 0; round < 5; round++) {
      const { payment, orderId } = await paymentThrough(stack, PAID_IN_FULL.slice(0, 2));
      await waitFor(async () => (await db().gatewayWebhook.count({ where: { orderId, status: "AC" } })) > 0 || null, "the AC webhook stored");
      const url = stack.services.links.returnUrl(payment, "standby");
      const answers = await Promise.all(Array.from({ length: 4 }, () => open(url)));
      expect(answers.map((answer) => answer.status)).not.toContain(500);
      expect(await db().outboxMessage.count({ where: { paymentId: payment.id, kind: "payment.pending" } })).toBe(1);
    }
  }, 120_000);
});
