// A return to wait (url_standby) answers "pending" without a read only from progress the app
// learnt recently: a coin chosen (PE) counts only within HELD_PROGRESS_FRESH_MS of learning it
// and while the order's stored expiry is not close, since the gateway expires an order from
// when its coin was fixed and the expiry's webhook may be lost. Past either, the return reads,
// and an expired order's session is rejected at once. On SQLite, with the sandbox's clock.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPaymentNow, SHOPPER_WAITING_READ } from "../../app/payments/check-payment";
import { HELD_PROGRESS_FRESH_MS } from "../../app/payments/handle-return";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { startStack, waitFor, type Stack } from "../support/stack";

describe("a return to wait after the order expired", () => {
  let stack: Stack;
  /** The app's clock ahead of real time (the sandbox signs its webhooks' nonces with real time). */
  let extraMs = 0;
  let frozen: Date | null = null;
  const clock = { now: () => frozen ?? new Date(Date.now() + extraMs) };

  beforeAll(async () => {
    stack = await startStack({ clock });
    stack.logger.info("standby return after expiry");
  }, 60_000);

  afterAll(async () => {
    await stack?.close();
  });

  const db = () => stack.services.db;
  const act = (orderId: string, body: Record<string, unknown>) => stack.sandboxControl(`/sandbox/orders/${orderId}/actions`, body) as Promise<Record<string, unknown>>;
  const shopifyState = (sessionId: string) => stack.standin.state.session(sessionId)?.state;

  async function webhookFaults(mode: "drop" | "deliver") {
    const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
    const key = stack.services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"));
    await stack.sandboxControl(`/sandbox/devices/${key}/webhook-faults`, { mode });
  }

  async function advanceSandbox(seconds: number) {
    await stack.sandboxControl("/sandbox/clock", { advance_seconds: seconds });
  }

  /** How far the sandbox's clock is ahead of real time (earlier tests moved it). */
  async function sandboxOffsetMs() {
    const answer = (await stack.sandboxControl("/sandbox/clock", undefined, "GET")) as { offset_seconds: number };
    return answer.offset_seconds * 1000;
  }

  async function open(url: string) {
    const answer = await fetch(url, { redirect: "manual" });
    return { status: answer.status, location: answer.headers.get("location"), body: await answer.text() };
  }

  /** A payment whose shopper chose SOL (a 15-minute window) and whose PE webhook the app stored. */
  async function coinChosen() {
    const { session, delivery } = await stack.standin.state.startPayment({ test: true });
    expect(delivery.status, delivery.body).toBe(200);
    const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
    const orderId = payment.gatewayOrderId!;
    const order = await act(orderId, { action: "choose_currency", currency: "SOL" });
    const hook = await waitFor(async () => db().gatewayWebhook.findFirst({ where: { orderId, status: "PE" } }), "the PE webhook stored");
    return { session, payment, orderId, expiredTime: new Date(String(order.expired_time)), peReceivedAt: hook.receivedAt };
  }

  it("a PE the app read 8 minutes before the return, with the order's stored expiry passed, is not taken for the order: the return reads and Shopify is told rejected", async () => {
    const offset = await sandboxOffsetMs();
    const { session, payment } = await coinChosen();
    try {
      // The shopper's payment page reads the order 10 minutes after the coin was fixed: PE.
      // (The app's clock is set on the sandbox's from here on; no webhook is let through.)
      await webhookFaults("drop");
      extraMs = offset + 10 * 60_000;
      const check = await checkPaymentNow(stack.services, payment.shopId, payment.id, { budget: SHOPPER_WAITING_READ });
      expect(check).toMatchObject({ ok: true, gatewayStatus: "PE" });
      // The order expires unpaid at its 15 minutes; its EX webhook is lost (the gateway does not retry).
      await advanceSandbox(16 * 60);
      // The return comes 18 minutes after the coin was fixed, 8 after the read.
      extraMs = offset + 18 * 60_000;
      const stored = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
      const now = clock.now();
      expect(stored.expiresAt!.getTime()).toBeLessThan(now.getTime());
      expect(now.getTime() - stored.lastCheckedAt!.getTime()).toBeLessThan(HELD_PROGRESS_FRESH_MS);

      const back = await open(stack.services.links.returnUrl(payment, "standby"));
      expect(back.status).toBe(303);
      expect(shopifyState(session.id)?.code).toBe("REJECTED");
    } finally {
      await webhookFaults("deliver");
      extraMs = 0;
    }
  }, 60_000);

  it("a PE webhook that arrived exactly HELD_PROGRESS_FRESH_MS before the return no longer counts: the return reads the expired order", async () => {
    const { session, payment, peReceivedAt } = await coinChosen();
    try {
      await webhookFaults("drop");
      await advanceSandbox(15 * 60 + 5);
      // Exactly the window after the app learnt PE (on the app's clock, which is real time here).
      frozen = new Date(peReceivedAt.getTime() + HELD_PROGRESS_FRESH_MS);

      const back = await open(stack.services.links.returnUrl(payment, "standby"));
      expect(back.status).toBe(303);
      expect(shopifyState(session.id)?.code).toBe("REJECTED");
    } finally {
      frozen = null;
      await webhookFaults("deliver");
    }
  }, 60_000);
});
