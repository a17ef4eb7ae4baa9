// The checkout scenarios, written once and run against each database.
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { hashDeviceKey } from "../../app/gateway/quota";
import { signWebhook } from "../../app/gateway/webhook-signature";
import { reconcileOnce } from "../../app/payments/reconcile";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { sendPaymentSession, waitFor, type Stack } from "../support/stack";

export function checkoutScenarios(getStack: () => Stack): void {
  const stack = () => getStack();
  const db = () => stack().services.db;

  async function startPayment(overrides: Record<string, unknown> = {}) {
    const { session, delivery } = await stack().standin.state.startPayment({ test: true, ...overrides });
    expect(delivery.status, delivery.body).toBe(200);
    const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
    expect(payment.gatewayOrderId).toBeTruthy();
    return { session, delivery, payment, orderId: payment.gatewayOrderId! };
  }

  const act = (orderId: string, body: Record<string, unknown>) => stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, body);
  const shopifyState = (sessionId: string) => stack().standin.state.session(sessionId)?.state.code;
  const calls = (sessionId: string, name: string) => stack().standin.state.operationsFor(sessionId).filter((op) => op.operationName === name).length;

  async function deviceKey(): Promise<string> {
    const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
    return stack().services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"));
  }
  const webhookFaults = async (mode: string, extra: Record<string, unknown> = {}) =>
    stack().sandboxControl(`/sandbox/devices/${await deviceKey()}/webhook-faults`, { mode, ...extra });

  /** A counter of the gateway calls made with the shop's sandbox device key. */
  async function gatewayReads() {
    const hash = hashDeviceKey(await deviceKey());
    return () => db().gatewayCall.count({ where: { deviceHash: hash } });
  }

  function returnUrl(payment: { id: string; shopId: string }, outcome: "ok" | "ko" | "standby") {
    return stack().services.links.returnUrl(payment, outcome);
  }

  async function settled(paymentId: string, state: string) {
    return waitFor(async () => {
      const p = await db().payment.findUniqueOrThrow({ where: { id: paymentId } });
      return p.state === state ? p : null;
    }, `payment ${state}`);
  }

  it("a paid payment: CO by webhook resolves once and the shopper returns to Shopify's next action", async () => {
    const { session, payment, orderId, delivery } = await startPayment();
    expect(delivery.redirectUrl).toMatch(new RegExp(`^${stack().sandbox.origin}/pay/`));
    await act(orderId, { action: "choose_currency", currency: "BTC" });
    await act(orderId, { action: "pay", amount: "exact" });
    await act(orderId, { action: "confirm" });
    await waitFor(async () => shopifyState(session.id) === "RESOLVED", "Shopify resolve");
    const paid = await waitFor(async () => {
      const p = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
      return p.shopifyOutcome === "resolved" ? p : null;
    }, "the resolve recorded");
    expect(paid.state).toBe("paid");
    expect(paid.gatewayStatus).toBe("CO");
    const back = await fetch(returnUrl(payment, "ok"), { redirect: "manual" });
    expect(back.status).toBe(303);
    expect(back.headers.get("location")).toBe(paid.nextActionUrl);
    expect(calls(session.id, "PaymentSessionResolve")).toBe(1);
    // Settled on the signed webhook alone; the next listing verifies it and records the coin transaction.
    expect(paid.unverifiedSince).not.toBeNull();
    const summary = await reconcileOnce(stack().services, { worker: "test", force: true });
    expect(summary.verified).toBeGreaterThanOrEqual(1);
    const verified = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(verified.unverifiedSince).toBeNull();
    expect(verified.attention).toBeNull();
    const transactions = await db().paymentTransaction.findMany({ where: { paymentId: payment.id } });
    expect(transactions).toHaveLength(1);
    expect(transactions[0]!.confirmed).toBe(true);
    expect(calls(session.id, "PaymentSessionResolve")).toBe(1);
  });

  it("the shopper returns before confirmation: AC gives pending, the later CO resolves", async () => {
    const { session, payment, orderId } = await startPayment();
    await act(orderId, { action: "choose_currency", currency: "ETH" });
    await act(orderId, { action: "pay", amount: "exact" });
    // The payment's webhook stored first (it is sent as the page redirects, and may come a moment
    // after the shopper: the return then answers from the coin's, "the buyer is paying").
    await waitFor(async () => (await db().gatewayWebhook.count({ where: { orderId, status: "AC" } })) > 0 || null, "the AC webhook stored");
    const back = await fetch(returnUrl(payment, "standby"), { redirect: "manual" });
    expect(back.status).toBe(303);
    expect(shopifyState(session.id)).toBe("PENDING");
    const pending = stack().standin.state.session(session.id)!.state;
    expect(pending.code === "PENDING" && pending.reason).toBe("NETWORK_ACTION_REQUIRED");
    await act(orderId, { action: "confirm" });
    await waitFor(async () => shopifyState(session.id) === "RESOLVED", "Shopify resolve after pending");
    expect(calls(session.id, "PaymentSessionPending")).toBe(1);
    expect(calls(session.id, "PaymentSessionResolve")).toBe(1);
  });

  it("an abandoned payment: the shopper sent back without paying goes to cancel_url", async () => {
    const { session, payment } = await startPayment();
    const back = await fetch(returnUrl(payment, "ko"), { redirect: "manual" });
    expect(back.status).toBe(303);
    expect(back.headers.get("location")).toBe(session.request.payment_method.data.cancel_url);
  });

  it("a shopper back before choosing a coin (NR) goes to cancel_url and Shopify is not told pending", async () => {
    const { session, payment } = await startPayment();
    const back = await fetch(returnUrl(payment, "standby"), { redirect: "manual" });
    expect(back.status).toBe(303);
    expect(back.headers.get("location")).toBe(session.request.payment_method.data.cancel_url);
    expect(calls(session.id, "PaymentSessionPending")).toBe(0);
    expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).shopifyOutcome).toBeNull();
  });

  it("a return link opened again and again reads the order once per spacing interval, not once per hit", async () => {
    const { payment, orderId } = await startPayment();
    await act(orderId, { action: "choose_currency", currency: "BTC" });
    const reads = await gatewayReads();
    const before = await reads();
    for (let hit = 0; hit < 20; hit++) {
      // Sent back as paid while the app still holds it open: the return reads the order.
      const back = await fetch(returnUrl(payment, "ok"), { redirect: "manual" });
      expect(back.status).toBeLessThan(400);
      await back.body?.cancel();
    }
    expect(await reads()).toBe(before + 1);
  });

  /** Waits until the shop's webhooks of the order report these statuses (stored at the door, verified). */
  async function webhooksStored(orderId: string, statuses: string[]) {
    await waitFor(async () => {
      const stored = await db().gatewayWebhook.findMany({ where: { orderId }, select: { status: true } });
      return statuses.every((status) => stored.some((hook) => hook.status === status)) || null;
    }, `webhooks ${statuses.join(", ")} stored`);
  }

  it("a return to wait after the payment's webhook reads nothing: pending (network) from the signed AC, then CO resolves", async () => {
    const { session, payment, orderId } = await startPayment();
    await act(orderId, { action: "choose_currency", currency: "ETH" });
    await act(orderId, { action: "pay", amount: "exact" });
    await webhooksStored(orderId, ["PE", "AC"]);
    const reads = await gatewayReads();
    const before = await reads();
    const back = await fetch(returnUrl(payment, "standby"), { redirect: "manual" });
    expect(back.status).toBe(303);
    expect(back.headers.get("location")).toBe((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).nextActionUrl);
    expect(await reads()).toBe(before);
    const pending = stack().standin.state.session(session.id)!.state;
    expect(pending.code === "PENDING" && pending.reason).toBe("NETWORK_ACTION_REQUIRED");
    await act(orderId, { action: "confirm" });
    await waitFor(async () => shopifyState(session.id) === "RESOLVED", "Shopify resolve after pending");
    expect(calls(session.id, "PaymentSessionPending")).toBe(1);
  });

  it("a return to wait with only the coin's webhook (the payment's lost) reads nothing and tells Shopify the buyer is paying", async () => {
    const { session, payment, orderId } = await startPayment();
    await act(orderId, { action: "choose_currency", currency: "ETH" });
    await webhooksStored(orderId, ["PE"]);
    await webhookFaults("drop");
    try {
      await act(orderId, { action: "pay", amount: "exact" });
      const reads = await gatewayReads();
      const before = await reads();
      const back = await fetch(returnUrl(payment, "standby"), { redirect: "manual" });
      expect(back.status).toBe(303);
      expect(await reads()).toBe(before);
      const pending = stack().standin.state.session(session.id)!.state;
      expect(pending.code === "PENDING" && pending.reason).toBe("BUYER_ACTION_REQUIRED");
    } finally {
      await webhookFaults("deliver");
    }
  });

  it("a return to wait with every webhook of the order lost reads the order once", async () => {
    await webhookFaults("drop");
    try {
      const { session, payment, orderId } = await startPayment();
      await act(orderId, { action: "choose_currency", currency: "ETH" });
      await act(orderId, { action: "pay", amount: "exact" });
      const reads = await gatewayReads();
      const before = await reads();
      const back = await fetch(returnUrl(payment, "standby"), { redirect: "manual" });
      expect(back.status).toBe(303);
      expect(await reads()).toBe(before + 1);
      expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).state).toBe("confirming");
      const pending = stack().standin.state.session(session.id)!.state;
      expect(pending.code === "PENDING" && pending.reason).toBe("NETWORK_ACTION_REQUIRED");
    } finally {
      await webhookFaults("deliver");
    }
  });

  it("a return to wait reads the order when a webhook of it may say more than a wait (a final status, or one that disagrees with the payment)", async () => {
    for (const [status, amount] of [["CO", null], ["AC", "1.00"]] as const) {
      const { session, payment, orderId } = await startPayment();
      await act(orderId, { action: "choose_currency", currency: "ETH" });
      await act(orderId, { action: "pay", amount: "exact" });
      await webhooksStored(orderId, ["PE", "AC"]);
      // A verified webhook the inbox has taken (or is taking) in: stored as the door stores one.
      const rawBody = JSON.stringify({ identifier: orderId, status, fiat_amount: Number(amount ?? payment.amount), fiat_currency: payment.currency });
      await db().gatewayWebhook.create({ data: { shopId: payment.shopId, gatewayEnv: payment.gatewayEnv, nonce: "1", signature: randomUUID(), rawBody, orderId, status, processedAt: new Date() } });
      const reads = await gatewayReads();
      const before = await reads();
      const back = await fetch(returnUrl(payment, "standby"), { redirect: "manual" });
      expect(back.status).toBe(303);
      expect(await reads(), status).toBe(before + 1);
      expect(shopifyState(session.id)).toBe("PENDING");
    }
  });

  it("expiry: EX rejects the Shopify session as cancelled", async () => {
    const { session, payment, orderId } = await startPayment();
    await act(orderId, { action: "choose_currency", currency: "LTC" });
    await act(orderId, { action: "expire" });
    await waitFor(async () => shopifyState(session.id) === "REJECTED", "Shopify reject");
    const state = stack().standin.state.session(session.id)!.state;
    expect(state.code === "REJECTED" && state.reason).toBe("CANCELLED_PAYMENT");
    const failed = await settled(payment.id, "failed");
    expect(failed.gatewayStatus).toBe("EX");
    expect(failed.attention).toBeNull();
  });

  it("underpayment: IA rejects and flags the payment for the merchant", async () => {
    const { session, payment, orderId } = await startPayment();
    await act(orderId, { action: "choose_currency", currency: "BTC" });
    await act(orderId, { action: "pay", amount: "less" });
    await act(orderId, { action: "confirm" });
    await waitFor(async () => shopifyState(session.id) === "REJECTED", "Shopify reject");
    const failed = await settled(payment.id, "failed");
    expect(failed.gatewayStatus).toBe("IA");
    expect(failed.attention).toBe("underpaid");
    const state = stack().standin.state.session(session.id)!.state;
    expect(state.code === "REJECTED" && state.reason).toBe("INSUFFICIENT_FUNDS");
  });

  it("no webhook at all: the reconciler settles the payment", async () => {
    await webhookFaults("drop");
    try {
      const { session, payment, orderId } = await startPayment();
      await act(orderId, { action: "choose_currency", currency: "BTC" });
      await act(orderId, { action: "pay", amount: "exact" });
      await act(orderId, { action: "confirm" });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).state).toBe("awaiting_payment");
      const summary = await reconcileOnce(stack().services, { worker: "test", force: true });
      expect(summary.gatewayCalls).toBeGreaterThanOrEqual(1);
      await waitFor(async () => shopifyState(session.id) === "RESOLVED", "resolve by reconciliation");
      expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).state).toBe("paid");
    } finally {
      await webhookFaults("deliver");
    }
  });

  it("duplicate and out-of-order webhooks end in exactly one resolve", async () => {
    await webhookFaults("duplicate");
    const first = await startPayment();
    await act(first.orderId, { action: "choose_currency", currency: "BTC" });
    await act(first.orderId, { action: "pay", amount: "exact" });
    await act(first.orderId, { action: "confirm" });
    await waitFor(async () => shopifyState(first.session.id) === "RESOLVED", "resolve with duplicates");
    await webhookFaults("reorder");
    const second = await startPayment();
    await act(second.orderId, { action: "choose_currency", currency: "BTC" });
    await act(second.orderId, { action: "pay", amount: "exact" });
    await act(second.orderId, { action: "confirm" });
    await webhookFaults("deliver");
    await waitFor(async () => shopifyState(second.session.id) === "RESOLVED", "resolve with reordering");
    // Let any late duplicate be processed before counting.
    await waitFor(async () => (await db().gatewayWebhook.count({ where: { processedAt: null } })) === 0, "inbox drained");
    expect(calls(first.session.id, "PaymentSessionResolve")).toBe(1);
    expect(calls(second.session.id, "PaymentSessionResolve")).toBe(1);
    const deliveries = (await stack().sandboxControl(`/sandbox/webhooks/deliveries?order=${first.orderId}`, undefined, "GET")) as unknown[];
    expect(deliveries.length).toBeGreaterThan(3);
    // Each CO came three times: the replay was refused at the door, and the copy signed again
    // with a later nonce was stored and dropped as a duplicate of the settled status.
    const completions = await db().gatewayWebhook.findMany({ where: { orderId: first.orderId, status: "CO" }, select: { processedAt: true, lastError: true } });
    expect(completions).toHaveLength(2);
    expect(completions.every((hook) => hook.processedAt !== null)).toBe(true);
    expect(completions.map((hook) => hook.lastError).sort()).toEqual(["duplicate of a settled status", null]);
  });

  it("a forged or replayed webhook is rejected and changes nothing", async () => {
    const { payment, orderId } = await startPayment();
    await act(orderId, { action: "choose_currency", currency: "BTC" });
    await settled(payment.id, "awaiting_payment");
    const shop = await db().shop.findUniqueOrThrow({ where: { id: payment.shopId } });
    const url = `${stack().app.url}/gateway/webhooks/${shop.webhookToken}`;
    const body = `{"identifier": "${orderId}", "status": "CO"}`;
    const nonce = String(Math.floor(Date.now() / 1000));
    const forged = await fetch(url, { method: "POST", body, headers: { "x-nonce": nonce, "x-signature": signWebhook({ secretHex: "ab".repeat(32), nonce, rawBody: body }) } });
    expect(forged.status).toBe(401);

    // The payment can be read as awaiting payment before the sandbox has recorded its notification's delivery.
    const real = await waitFor(async () => {
      const deliveries = (await stack().sandboxControl(`/sandbox/webhooks/deliveries?order=${orderId}`, undefined, "GET")) as { headers: Record<string, string>; body: string }[];
      return deliveries.at(-1);
    }, "the order's notification delivered");
    const header = (name: string) => Object.entries(real.headers).find(([k]) => k.toLowerCase() === name)?.[1] ?? "";
    const replay = await fetch(url, { method: "POST", body: real.body, headers: { "x-nonce": header("x-nonce"), "x-signature": header("x-signature") } });
    expect([409, 401]).toContain(replay.status);
    const other = await fetch(`${stack().app.url}/gateway/webhooks/${"x".repeat(32)}`, { method: "POST", body, headers: { "x-nonce": nonce, "x-signature": "0".repeat(64) } });
    expect(other.status).toBe(404);
    const after = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(after.state).toBe("awaiting_payment");
    const rejected = await db().rejectedWebhook.findMany({ where: { shopId: shop.id } });
    expect(rejected.map((r) => r.reason)).toEqual(expect.arrayContaining(["bad_signature"]));
  });

  it("a Secret Key replaced elsewhere applies to the next notification: one signed with the old key is refused", async () => {
    const { payment, orderId } = await startPayment();
    const shop = await db().shop.findUniqueOrThrow({ where: { id: payment.shopId } });
    const context = credentialContext(shop.id, "sandbox", "secret-key");
    const oldSecret = stack().services.cipher.decrypt(shop.sandboxSecretKeyEnc!, context);
    let sent = 0;
    const send = (secretHex: string) => {
      const body = `{"identifier": "${orderId}", "status": "NR"}`;
      // A fresh nonce each time (a second apart, within the allowed age): no two are replays.
      const nonce = String(Math.floor(Date.now() / 1000) - sent++);
      return fetch(`${stack().app.url}/gateway/webhooks/${shop.webhookToken}`, {
        method: "POST",
        body,
        headers: { "x-nonce": nonce, "x-signature": signWebhook({ secretHex, nonce, rawBody: body }) },
      });
    };
    // The app remembers the shop from this notification on.
    expect((await send(oldSecret)).status).toBe(200);
    const newSecret = "cd".repeat(32);
    await db().shop.update({ where: { id: shop.id }, data: { sandboxSecretKeyEnc: stack().services.cipher.encrypt(newSecret, context) } });
    try {
      expect((await send(oldSecret)).status).toBe(401);
      expect((await send(newSecret)).status).toBe(200);
    } finally {
      await db().shop.update({ where: { id: shop.id }, data: { sandboxSecretKeyEnc: shop.sandboxSecretKeyEnc } });
    }
    expect((await send(newSecret)).status).toBe(401);
    expect((await send(oldSecret)).status).toBe(200);
  });

  it("Shopify's API failing for a while: the outbox retries until the resolve lands", async () => {
    stack().standin.state.setFault({ mode: "http_500", count: 2 });
    const { session, orderId } = await startPayment();
    await act(orderId, { action: "choose_currency", currency: "BTC" });
    await act(orderId, { action: "pay", amount: "exact" });
    await act(orderId, { action: "confirm" });
    await waitFor(async () => shopifyState(session.id) === "RESOLVED", "resolve after Shopify outage", 30_000);
    const paymentId = (await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } })).id;
    const message = await waitFor(async () => db().outboxMessage.findFirst({ where: { kind: "payment.resolve", paymentId, status: "done" } }), "outbox message done");
    expect(message.attempts).toBeGreaterThanOrEqual(3);
  });

  it("a retried payment session (even concurrently) gets the first answer and one gateway order", async () => {
    const session = stack().standin.state.createPaymentSession({ test: true });
    const answers = await Promise.all([0, 1, 2].map(() => stack().standin.state.redeliverPayment(session.id)));
    const redirects = new Set(answers.map((a) => a.delivery.redirectUrl));
    expect(answers.map((a) => a.delivery.status)).toEqual([200, 200, 200]);
    expect(redirects.size).toBe(1);
    const again = await stack().standin.state.redeliverPayment(session.id);
    expect(again.delivery.redirectUrl).toBe([...redirects][0]);
    const payments = await db().payment.findMany({ where: { shopifyPaymentId: session.id } });
    expect(payments).toHaveLength(1);
    const orders = await listSandboxOrders();
    expect(orders.filter((o) => o.reference === session.id)).toHaveLength(1);
  });

  it("a repeated session still gets its first answer after the shop's test credentials were removed; a new one is refused", async () => {
    const { session, delivery, payment } = await startPayment();
    expect(payment.orderRequestedAt).not.toBeNull();
    const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
    await db().shop.update({ where: { id: shop.id }, data: { sandboxDeviceKeyEnc: null, sandboxSecretKeyEnc: null } });
    try {
      const again = await stack().standin.state.redeliverPayment(session.id);
      expect(again.delivery.status).toBe(200);
      expect(again.delivery.redirectUrl).toBe(delivery.redirectUrl);
      const fresh = await stack().standin.state.startPayment({ test: true });
      expect(fresh.delivery.status).toBe(422);
      expect(fresh.delivery.body).toContain("shop_not_configured");
      expect(await db().payment.count({ where: { shopifyPaymentId: fresh.session.id } })).toBe(0);
    } finally {
      await db().shop.update({ where: { id: shop.id }, data: { sandboxDeviceKeyEnc: shop.sandboxDeviceKeyEnc, sandboxSecretKeyEnc: shop.sandboxSecretKeyEnc } });
    }
  });

  it("a change to the shop made elsewhere (another instance, the admin) applies from the next session on", async () => {
    // The app remembers the shop from this session on, and checks the row when recording the next.
    await startPayment();
    const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
    const ordersBefore = (await listSandboxOrders()).length;
    try {
      await db().shop.update({ where: { id: shop.id }, data: { checkoutMode: "app_page" } });
      const onAppPage = await stack().standin.state.startPayment({ test: true });
      expect(onAppPage.delivery.status, onAppPage.delivery.body).toBe(200);
      expect(onAppPage.delivery.redirectUrl).toContain(`${stack().app.url}/pay/`);
      const recorded = await db().payment.findMany({ where: { shopifyPaymentId: onAppPage.session.id } });
      expect(recorded.map((p) => [p.state, p.gatewayOrderId, p.orderRequestedAt])).toEqual([["started", null, null]]);
      expect((await listSandboxOrders()).length).toBe(ordersBefore);

      await db().shop.update({ where: { id: shop.id }, data: { uninstalledAt: new Date() } });
      const uninstalled = await stack().standin.state.startPayment({ test: true });
      expect(uninstalled.delivery.status).toBe(422);
      expect(uninstalled.delivery.body).toContain("shop_not_configured");
      expect(await db().payment.count({ where: { shopifyPaymentId: uninstalled.session.id } })).toBe(0);
    } finally {
      await db().shop.update({ where: { id: shop.id }, data: { checkoutMode: shop.checkoutMode, uninstalledAt: null } });
    }
    const back = await startPayment();
    expect(back.delivery.redirectUrl).toMatch(new RegExp(`^${stack().sandbox.origin}/pay/`));
  });

  it("with the shop's test mode on, a real checkout is refused and never reaches the sandbox; Shopify's test orders still pay there", async () => {
    const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
    const ordersBefore = (await listSandboxOrders()).length;
    await db().shop.update({ where: { id: shop.id }, data: { testMode: true } });
    try {
      const real = await stack().standin.state.startPayment({ test: false });
      expect(real.delivery.status).toBe(422);
      expect(real.delivery.body).toContain("test_mode");
      expect(await db().payment.count({ where: { shopifyPaymentId: real.session.id } })).toBe(0);
      expect((await listSandboxOrders()).length).toBe(ordersBefore);
      const test = await stack().standin.state.startPayment({ test: true });
      expect(test.delivery.status).toBe(200);
      expect(test.delivery.redirectUrl).toMatch(new RegExp(`^${stack().sandbox.origin}/pay/`));
    } finally {
      await db().shop.update({ where: { id: shop.id }, data: { testMode: shop.testMode } });
    }
  });

  it("a session in a currency the gateway does not take is refused with nothing stored", async () => {
    const session = stack().standin.state.createPaymentSession({ test: true });
    const response = await sendPaymentSession(stack(), { ...session.request, currency: "VND" });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ error: "unsupported_currency" });
    expect(await db().payment.count({ where: { shopifyPaymentId: session.id } })).toBe(0);
  });

  it("a return link cannot settle another payment or shop", async () => {
    const { payment } = await startPayment();
    const other = await startPayment();
    const forged = returnUrl(payment, "ok").replace(payment.id, other.payment.id);
    const answer = await fetch(forged, { redirect: "manual" });
    expect(answer.status).toBe(404);
    const bogus = await fetch(`${stack().app.url}/payments/return/${randomUUID().replace(/-/g, "").slice(0, 25)}/ok?sig=${"a".repeat(43)}`, { redirect: "manual" });
    expect(bogus.status).toBe(404);
  });

  it("refunds are answered 201, deduplicated, and rejected with a message that says how to refund from the gateway", async () => {
    const { session, orderId } = await startPayment();
    await act(orderId, { action: "choose_currency", currency: "BTC" });
    await act(orderId, { action: "pay", amount: "exact" });
    await act(orderId, { action: "confirm" });
    await waitFor(async () => shopifyState(session.id) === "RESOLVED", "paid before the refund");
    const { session: refund, delivery } = await stack().standin.state.startFollowUp("refund", session.id);
    expect(delivery.status).toBe(201);
    expect(delivery.body).toBe("");
    await waitFor(async () => stack().standin.state.session(refund.id)?.state.code === "REJECTED", "refund rejected");
    const state = stack().standin.state.session(refund.id)!.state;
    expect(state.code === "REJECTED" && state.merchantMessage).toMatch(/gateway dashboard/);
    // Shopify may deliver the same refund again: same answer, no second call.
    const again = await fetch(`${stack().app.url}/payments/refund`, {
      method: "POST",
      headers: { "content-type": "application/json", "shopify-shop-domain": stack().shopDomain, "shopify-request-id": randomUUID(), "shopify-api-version": "2026-04" },
      body: JSON.stringify(refund.request),
    });
    expect(again.status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(stack().standin.state.operationsFor(refund.id).filter((op) => op.operationName === "RefundSessionReject")).toHaveLength(1);
  });

  it("an authorization paid in crypto: capture resolves (the money is in); a void is accepted and the payment flagged to refund the crypto from the gateway dashboard", async () => {
    const paidAuthorization = async () => {
      const { session, orderId } = await startPayment({ kind: "authorization" });
      await act(orderId, { action: "choose_currency", currency: "BTC" });
      await act(orderId, { action: "pay", amount: "exact" });
      await act(orderId, { action: "confirm" });
      await waitFor(async () => shopifyState(session.id) === "RESOLVED", "authorization paid");
      return session;
    };
    const captured = await paidAuthorization();
    // A partial capture would leave crypto received that Shopify's books do not show: refused.
    const paidAmount = (await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: captured.id } })).amount;
    const partial = await stack().standin.state.startFollowUp("capture", captured.id, { amount: "1.00" });
    expect(partial.delivery.status).toBe(201);
    await waitFor(async () => stack().standin.state.session(partial.session.id)?.state.code === "REJECTED", "partial capture rejected");
    const refused = stack().standin.state.session(partial.session.id)!.state;
    expect(refused.code === "REJECTED" && refused.merchantMessage).toContain(`paid ${paidAmount}`);
    const capture = await stack().standin.state.startFollowUp("capture", captured.id);
    expect(capture.delivery.status).toBe(201);
    await waitFor(async () => stack().standin.state.session(capture.session.id)?.state.code === "RESOLVED", "capture resolved");

    const voided = await paidAuthorization();
    const voiding = await stack().standin.state.startFollowUp("void", voided.id);
    expect(voiding.delivery.status).toBe(201);
    await waitFor(async () => stack().standin.state.session(voiding.session.id)?.state.code === "RESOLVED", "void resolved");
    const flagged = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: voided.id } });
    expect(flagged).toMatchObject({ state: "paid", attention: "paid_after_void", attentionResolvedAt: null });
    expect(flagged.attentionDetail).toContain("refund it from the gateway dashboard");
  });

  async function listSandboxOrders(): Promise<{ reference: string | null }[]> {
    const response = await fetch(`${stack().sandbox.baseUrl}/orders/`, { headers: { "X-Device-Id": await deviceKey() } });
    expect(response.status).toBe(200);
    return (await response.json()) as { reference: string | null }[];
  }
}
