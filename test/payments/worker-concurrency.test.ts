// The inbox and the outbox under concurrency: passes running at once (two workers of one
// instance, or two instances) share the work without doing any of it twice, and the
// outbox's parallel delivery keeps each payment's Shopify calls in the order they were stored.
import { expect, it } from "vitest";
import { deliverDueMessages, deliverNow, enqueue } from "../../app/payments/outbox";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import { signWebhook } from "../../app/gateway/webhook-signature";
import type { PaymentsDeps } from "../../app/payments/deps";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { stackForFile, waitFor } from "../support/stack";

const stack = stackForFile({ workers: false });

const db = () => stack().services.db;
const act = (orderId: string, body: Record<string, string>) => stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, body);
const operations = (sessionId: string) => stack().standin.state.operationsFor(sessionId).map((op) => op.operationName);

async function startPayment() {
  const { session } = await stack().standin.state.startPayment({ test: true });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  return { session, payment, orderId: payment.gatewayOrderId! };
}

it("two inbox passes at once process every stored webhook exactly once", async () => {
  const payments = await Promise.all(Array.from({ length: 6 }, startPayment));
  for (const { orderId } of payments) {
    await act(orderId, { action: "choose_currency", currency: "BTC" });
    await act(orderId, { action: "pay", amount: "exact" });
    await act(orderId, { action: "confirm" });
  }
  const orderIds = payments.map((p) => p.orderId);
  await waitFor(async () => (await db().gatewayWebhook.count({ where: { orderId: { in: orderIds }, status: "CO" } })) === 6 || null, "six CO webhooks stored");
  const stored = await db().gatewayWebhook.count({ where: { orderId: { in: orderIds }, processedAt: null } });

  const [a, b] = await Promise.all([processWebhookInbox(stack().services, { worker: "a" }), processWebhookInbox(stack().services, { worker: "b" })]);
  const handled = a.processed + a.duplicates + b.processed + b.duplicates;
  expect(a.retried + b.retried).toBe(0);
  expect(handled).toBe(stored);
  const hooks = await db().gatewayWebhook.findMany({ where: { orderId: { in: orderIds } } });
  expect(hooks.every((h) => h.processedAt !== null && h.attempts === 1)).toBe(true);

  await deliverDueMessages(stack().services, { worker: "o", concurrency: 8 });
  for (const { session, payment } of payments) {
    expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).shopifyOutcome).toBe("resolved");
    expect(operations(session.id).filter((name) => name === "PaymentSessionResolve")).toHaveLength(1);
  }
});

it("parallel delivery keeps one payment's messages in order: its pending reaches Shopify before its resolve", async () => {
  const payments = await Promise.all(Array.from({ length: 5 }, startPayment));
  const now = new Date();
  for (const { payment } of payments) {
    await db().$transaction(async (tx) => {
      await enqueue(tx, {
        shopDomain: stack().shopDomain,
        paymentId: payment.id,
        dedupeKey: `test:${payment.id}:pending`,
        payload: { kind: "payment.pending", gid: payment.gid, reason: "BUYER_ACTION_REQUIRED", pendingExpiresAt: new Date(now.getTime() + 86_400_000).toISOString() },
        now,
      });
      await enqueue(tx, { shopDomain: stack().shopDomain, paymentId: payment.id, dedupeKey: `test:${payment.id}:final`, payload: { kind: "payment.resolve", gid: payment.gid }, now });
    });
  }
  const counts = await deliverDueMessages(stack().services, { worker: "o", concurrency: 8 });
  expect(counts.done).toBe(10);
  for (const { session } of payments) {
    expect(operations(session.id).filter((name) => name !== null && name.startsWith("PaymentSession"))).toEqual(["PaymentSessionPending", "PaymentSessionResolve"]);
  }
});

it("two outbox passes at once claim the due messages between them and deliver each once", async () => {
  const payments = await Promise.all(Array.from({ length: 6 }, startPayment));
  const now = new Date();
  for (const { payment } of payments) {
    await db().$transaction((tx) => enqueue(tx, { shopDomain: stack().shopDomain, paymentId: payment.id, dedupeKey: `twice:${payment.id}:final`, payload: { kind: "payment.resolve", gid: payment.gid }, now }));
  }
  const [a, b] = await Promise.all([
    deliverDueMessages(stack().services, { worker: "a", concurrency: 4 }),
    deliverDueMessages(stack().services, { worker: "b", concurrency: 4 }),
  ]);
  expect(a.done + b.done).toBe(6);
  for (const { session } of payments) {
    expect(operations(session.id).filter((name) => name === "PaymentSessionResolve")).toHaveLength(1);
  }
});

it("a delivery that crashes gives the payment's later messages back at once, for the next pass", async () => {
  const { session, payment } = await startPayment();
  const now = new Date();
  // A message whose payload cannot be read makes its delivery throw.
  const broken = await db().outboxMessage.create({
    data: { shopDomain: stack().shopDomain, paymentId: payment.id, kind: "payment.pending", dedupeKey: `crash:${payment.id}:pending`, payload: "{not json", nextAttemptAt: now, createdAt: now },
  });
  const resolve = await db().$transaction((tx) =>
    enqueue(tx, { shopDomain: stack().shopDomain, paymentId: payment.id, dedupeKey: `crash:${payment.id}:final`, payload: { kind: "payment.resolve", gid: payment.gid }, now: new Date(now.getTime() + 1) }),
  );
  await db().outboxMessage.update({ where: { id: resolve.id }, data: { createdAt: new Date(now.getTime() + 1) } });

  const first = await deliverDueMessages(stack().services, { worker: "o", concurrency: 8 });
  expect(first).toMatchObject({ done: 0, retry: 1 });
  expect(await db().outboxMessage.findUniqueOrThrow({ where: { id: broken.id } })).toMatchObject({ status: "pending", lockedUntil: null, lastError: expect.stringContaining("JSON") });
  // Not held for the claim's 30 s: free for the next pass, and nothing was sent for it yet.
  expect(await db().outboxMessage.findUniqueOrThrow({ where: { id: resolve.id } })).toMatchObject({ status: "pending", lockedBy: null, lockedUntil: null });
  expect(operations(session.id)).not.toContain("PaymentSessionResolve");

  const second = await deliverDueMessages(stack().services, { worker: "o", concurrency: 8 });
  expect(second.done).toBe(1);
  expect(operations(session.id).filter((name) => name === "PaymentSessionResolve")).toHaveLength(1);
});

it("an inline delivery leaves a message waiting out its backoff alone: a shopper's refreshes do not hammer Shopify", async () => {
  const { session, payment } = await startPayment();
  const message = await db().$transaction((tx) =>
    enqueue(tx, { shopDomain: stack().shopDomain, paymentId: payment.id, dedupeKey: `inline:${payment.id}:final`, payload: { kind: "payment.resolve", gid: payment.gid }, now: new Date() }),
  );
  stack().standin.state.setFault({ mode: "http_500", count: 1 });
  expect(await deliverNow(stack().services, message.id)).toBe("retry");
  const waiting = await db().outboxMessage.findUniqueOrThrow({ where: { id: message.id } });
  expect(waiting).toMatchObject({ status: "pending", attempts: 1, lockedUntil: null });
  expect(waiting.nextAttemptAt.getTime()).toBeGreaterThan(Date.now());

  for (let refresh = 0; refresh < 3; refresh++) expect(await deliverNow(stack().services, message.id)).toBe("skipped");
  expect((await db().outboxMessage.findUniqueOrThrow({ where: { id: message.id } })).attempts).toBe(1);
  expect(operations(session.id)).not.toContain("PaymentSessionResolve");

  // Once due again, the next inline delivery (or the worker) sends it.
  await db().outboxMessage.update({ where: { id: message.id }, data: { nextAttemptAt: new Date() } });
  expect(await deliverNow(stack().services, message.id)).toBe("done");
  expect(operations(session.id).filter((name) => name === "PaymentSessionResolve")).toHaveLength(1);
});

it("an inbox pass that lost its claim while it read the gateway leaves the webhooks to the pass that holds them now", async () => {
  const { payment, orderId } = await startPayment();
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  const secretHex = stack().services.cipher.decrypt(shop.sandboxSecretKeyEnc!, credentialContext(shop.id, "sandbox", "secret-key"));
  // A final status without the order's amount is only a trigger: the pass reads the order.
  const body = `{"identifier": "${orderId}", "status": "CO"}`;
  const nonce = String(Math.floor(Date.now() / 1000));
  const stored = await fetch(`${stack().app.url}/gateway/webhooks/${shop.webhookToken}`, { method: "POST", body, headers: { "x-nonce": nonce, "x-signature": signWebhook({ secretHex, nonce, rawBody: body }) } });
  expect(stored.status).toBe(200);
  const hook = await db().gatewayWebhook.findFirstOrThrow({ where: { orderId, processedAt: null } });

  // While the pass waits for the gateway, its claim runs out and another pass claims the webhook.
  const services = stack().services;
  const slowed: PaymentsDeps = {
    ...services,
    gateways: {
      ...services.gateways,
      forShop: (row, env) => {
        const access = services.gateways.forShop(row, env);
        if (!access) return access;
        const takeOver = () => db().gatewayWebhook.update({ where: { id: hook.id }, data: { lockedBy: "the-other-pass", lockedUntil: new Date(Date.now() + 30_000) } });
        const client = {
          ...access.client,
          orderInfo: async (id: Parameters<typeof access.client.orderInfo>[0]) => (await takeOver(), access.client.orderInfo(id)),
          listOrders: async (range: Parameters<typeof access.client.listOrders>[0]) => (await takeOver(), access.client.listOrders(range)),
        };
        return { ...access, client };
      },
    },
  };
  await processWebhookInbox(slowed, { worker: "slow" });
  expect(await db().gatewayWebhook.findUniqueOrThrow({ where: { id: hook.id } })).toMatchObject({ processedAt: null, lockedBy: "the-other-pass" });
  expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).state).toBe("awaiting_payment");

  // Once that claim is over, a pass processes it as usual.
  await db().gatewayWebhook.update({ where: { id: hook.id }, data: { lockedBy: null, lockedUntil: null } });
  await processWebhookInbox(services, { worker: "next" });
  expect((await db().gatewayWebhook.findUniqueOrThrow({ where: { id: hook.id } })).processedAt).not.toBeNull();
});

it("a shopper who paid two crypto orders for one checkout: Shopify takes one resolve, and the other payment is rejected there and tells the merchant it was paid twice", async () => {
  const first = await startPayment();
  const { session: again } = await stack().standin.state.startPayment({ test: true }, { sameCheckoutAs: first.session.id });
  const second = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: again.id } });
  expect(second.groupId).toBe(first.payment.groupId);
  for (const orderId of [first.orderId, second.gatewayOrderId!]) {
    await act(orderId, { action: "choose_currency", currency: "BTC" });
    await act(orderId, { action: "pay", amount: "exact" });
    await act(orderId, { action: "confirm" });
  }
  const ids = [first.payment.id, second.id];
  await waitFor(async () => (await db().gatewayWebhook.count({ where: { orderId: { in: [first.orderId, second.gatewayOrderId!] }, status: "CO" } })) === 2 || null, "both CO webhooks stored");
  await processWebhookInbox(stack().services, { worker: "i" });
  // One at a time: whichever resolve comes first is the one Shopify takes.
  await deliverDueMessages(stack().services, { worker: "o", concurrency: 1 });
  const payments = await Promise.all(ids.map((id) => db().payment.findUniqueOrThrow({ where: { id } })));
  const accepted = payments.filter((p) => p.shopifyOutcome === "resolved");
  const refused = payments.filter((p) => p.shopifyOutcome !== "resolved");
  expect(accepted).toHaveLength(1);
  expect(refused).toEqual([expect.objectContaining({ state: "paid", attention: "paid_twice", shopifyOutcome: "rejected" })]);
  expect(refused[0]!.attentionDetail).toContain(`(Shopify payment ${accepted[0]!.shopifyPaymentId}) was already accepted, so the shopper paid twice`);
  expect(stack().standin.state.session(refused[0]!.shopifyPaymentId)?.state.code).toBe("REJECTED");
});
