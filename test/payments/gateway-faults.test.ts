// Gateway faults during checkout: a 500 after the order was created (the outcome is
// unknown), timeouts, 429 storms, failing reads, and requests that outlive their claim on a
// payment. Nothing is lost, and a payment session never records or hands out a second
// gateway order.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";
import type { Prisma } from "../../generated/prisma/sqlite/client";
import type { PlainSql } from "../../app/db/plain-sql.server";
import type { Database } from "../../app/db/database.server";
import { createPrismaQuotaStore } from "../../app/db/prisma-quota-store.server";
import { paymentSessionRequestSchema } from "../../app/payments/shopify-requests";
import { createOrderWithCurrency, ORDER_MAY_STILL_APPEAR_MS, startPaymentSession, type SessionAnswer } from "../../app/payments/start-payment-session";
import { ABANDONED_SESSION_ANSWER, reconcileOnce } from "../../app/payments/reconcile";
import { createServices, type AppServices } from "../../app/services.server";
import { createGatewayDirectory } from "../../app/shops/gateway-directory.server";
import { credentialsVersion, removeGatewayCredentials } from "../../app/shops/onboarding.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { startStack, waitFor, type Stack } from "../support/stack";

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
}, 60_000);

afterEach(async () => {
  await stack.sandboxControl("/sandbox/faults", undefined, "DELETE");
  await stack.services.db.shop.update({ where: { shopDomain: stack.shopDomain }, data: { checkoutMode: "gateway_choice", liveFixedCurrency: null, sandboxFixedCurrency: null } });
});

afterAll(async () => {
  await stack?.close();
});

const db = () => stack.services.db;

/** A point a test opens when it is ready: `opened` settles once `open` was called. */
function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * The app's services on the stack's database with another clock, statements or gateway fetch
 * (and gateway timeout): a second instance, as a retry may reach.
 */
function instance(options: { clock?: { now(): Date }; sql?: PlainSql; fetch?: typeof fetch; gatewayTimeoutMs?: number; db?: Database } = {}): AppServices {
  const base = stack.services;
  const services = createServices(base.env, { db: options.db ?? base.db, sql: options.sql ?? base.sql, logger: stack.logger, ...(options.clock ? { clock: options.clock } : {}), ...(options.fetch ? { fetch: options.fetch } : {}) });
  if (options.gatewayTimeoutMs === undefined) return services;
  const gateways = createGatewayDirectory({
    cipher: base.cipher,
    baseUrls: base.gatewayBaseUrls,
    quotaStore: createPrismaQuotaStore(base.db, base.sql, {
      generalPerMinute: base.env.GATEWAY_LIMIT_PER_MINUTE,
      generalPerDay: base.env.GATEWAY_LIMIT_PER_DAY,
      criticalPerMinute: base.env.GATEWAY_CRITICAL_LIMIT_PER_MINUTE,
      criticalPerDay: base.env.GATEWAY_CRITICAL_LIMIT_PER_DAY,
    }),
    logger: stack.logger,
    timeoutMs: options.gatewayTimeoutMs,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.clock ? { clock: () => options.clock!.now() } : {}),
  });
  return { ...services, gateways };
}

/** The stack's statements, each batch of them (one, or a transaction's) passed through `around`. */
function statementsThrough(around: <T>(statements: Prisma.Sql[], run: () => Promise<T>) => Promise<T>): PlainSql {
  const base = stack.services.sql;
  return {
    kind: base.kind,
    execute: (statement) => around([statement], () => base.execute(statement)),
    query: (statement) => around([statement], () => base.query(statement)),
    executeInTransaction: (statements) => around(statements, () => base.executeInTransaction(statements)),
    inTransaction: (work) => base.inTransaction(work),
  };
}

const isOrderCreation = (input: Parameters<typeof fetch>[0], init?: RequestInit) => init?.method === "POST" && String(input).endsWith("/orders/");

/** A gateway fetch whose order creations wait until released; `reached` settles when one is on its way. */
function heldOrderCreations() {
  const reached = gate();
  const released = gate();
  const held: typeof fetch = async (input, init) => {
    if (isOrderCreation(input, init)) {
      reached.open();
      await released.opened;
    }
    return fetch(input, init);
  };
  return { fetch: held, reached: reached.opened, release: released.open };
}

/** The app's clock, which a test moves on by setting `offset`. */
function movableClock() {
  const clock = { offset: 0, now: () => new Date(Date.now() + clock.offset) };
  return clock;
}

/** The sandbox orders with this reference on the device `key` (by default the shop's sandbox device in use). */
async function ordersWithReference(reference: string, key?: string): Promise<number> {
  key ??= await sandboxDeviceKey();
  const response = await fetch(`${stack.sandbox.baseUrl}/orders/`, { headers: { "X-Device-Id": key } });
  const orders = (await response.json()) as { reference: string | null }[];
  return orders.filter((o) => o.reference === reference).length;
}

async function sandboxDeviceKey(): Promise<string> {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  return stack.services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"));
}

/** The order creations the app's quota counts, on every device. */
const criticalSlots = () => db().gatewayCall.count({ where: { class: "critical" } });

it("the order's quota slot is taken while the session is recorded, and the order is sent only once the record is committed", async () => {
  const base = stack.services;
  const events: string[] = [];
  // The session's record is held up on its way to the database; the quota slot and the
  // gateway request say when they happen.
  async function observed<T>(statements: Prisma.Sql[], run: () => Promise<T>): Promise<T> {
    const text = statements.map((s) => s.sql).join(";");
    if (text.includes('INSERT INTO "Payment"')) {
      events.push("record sent");
      await sleep(300);
      const result = await run();
      events.push("record committed");
      return result;
    }
    const result = await run();
    if (text.includes('"GatewayCall"') || text.includes("takeGatewayCall")) events.push("slot taken");
    return result;
  }
  const sql = statementsThrough(observed);
  const watchedFetch: typeof fetch = async (input, init) => {
    if (init?.method === "POST" && String(input).endsWith("/orders/")) events.push("order sent");
    return fetch(input, init);
  };
  const services = createServices(base.env, { db: base.db, sql, fetch: watchedFetch, logger: stack.logger });
  const request = paymentSessionRequestSchema.parse(stack.standin.state.createPaymentSession({ test: true }).request);
  const answer = await startPaymentSession(services, { shopDomain: stack.shopDomain, request });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(events).toEqual(["record sent", "slot taken", "record committed", "order sent"]);
  expect(await ordersWithReference(request.id)).toBe(1);
});

it("a session whose record cannot be written fails (the API answers 500, and Shopify retries), records nothing and gives back its order's quota slot", async () => {
  // The database refuses the session's record (a lost connection, a statement timeout) while
  // the order's quota slot is taken beside it.
  const sql = statementsThrough((statements, run) =>
    statements.some((s) => s.sql.includes('INSERT INTO "Payment"')) ? Promise.reject(new Error("the database refused the record")) : run(),
  );
  const request = paymentSessionRequestSchema.parse(stack.standin.state.createPaymentSession({ test: true }).request);
  const slotsBefore = await criticalSlots();
  for (let attempt = 0; attempt < 3; attempt++) {
    await expect(startPaymentSession(instance({ sql }), { shopDomain: stack.shopDomain, request })).rejects.toThrow("the database refused the record");
  }
  // Given back as each slot comes (the failure is answered without waiting for it).
  await vi.waitFor(async () => expect(await criticalSlots()).toBe(slotsBefore));
  expect(await db().payment.count({ where: { shopifyPaymentId: request.id } })).toBe(0);
  expect(await ordersWithReference(request.id)).toBe(0);

  // Once the database takes it, Shopify's retry starts the payment as a first request would.
  const answer = await startPaymentSession(stack.services, { shopDomain: stack.shopDomain, request });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(await criticalSlots()).toBe(slotsBefore + 1);
  expect(await ordersWithReference(request.id)).toBe(1);
});

it("a session whose shop's device is removed between the shop's read and the session's record is answered as the shop is now: refused, nothing recorded, no order on the removed device", async () => {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  const removedKey = await sandboxDeviceKey();
  let removed = false;
  // The merchant removes the device just as the session's record is written (a fresh instance:
  // the shop is read, not recalled).
  const sql = statementsThrough(async (statements, run) => {
    if (!removed && statements.some((s) => s.sql.includes('INSERT INTO "Payment"'))) {
      removed = true;
      const current = await db().shop.findUniqueOrThrow({ where: { id: shop.id } });
      expect((await removeGatewayCredentials(stack.services, stack.shopDomain, "sandbox", credentialsVersion(current, "sandbox")!)).ok).toBe(true);
    }
    return run();
  });
  try {
    const request = paymentSessionRequestSchema.parse(stack.standin.state.createPaymentSession({ test: true }).request);
    const answer = await startPaymentSession(instance({ sql }), { shopDomain: stack.shopDomain, request });
    expect(removed).toBe(true);
    expect({ status: answer.status, recorded: await db().payment.count({ where: { shopifyPaymentId: request.id } }) }).toEqual({ status: 422, recorded: 0 });
    expect(await ordersWithReference(request.id, removedKey)).toBe(0);
  } finally {
    const { id, ...columns } = shop;
    await db().shop.update({ where: { id }, data: columns });
  }
});

it("a session recorded while its order's quota slot could not be taken fails with nothing sent, and Shopify's next retry creates the order at once", async () => {
  // The quota's statement fails (a statement timeout behind the device's lock, a lost
  // connection) while the session's record beside it is committed.
  const sql = statementsThrough((statements, run) =>
    statements.some((s) => s.sql.includes('"GatewayCall"') || s.sql.includes("takeGatewayCall")) ? Promise.reject(new Error("the database refused the quota slot")) : run(),
  );
  const request = paymentSessionRequestSchema.parse(stack.standin.state.createPaymentSession({ test: true }).request);
  await expect(startPaymentSession(instance({ sql }), { shopDomain: stack.shopDomain, request })).rejects.toThrow("the database refused the quota slot");
  // Nothing was sent, and the record says so: no claim, no order requested.
  expect(await ordersWithReference(request.id)).toBe(0);
  expect(await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: request.id } })).toMatchObject({ sessionClaimToken: null, orderRequestedAt: null, gatewayOrderId: null });

  // Shopify's retry is answered with the order, not told to wait for an attempt that is over.
  const answer = await startPaymentSession(stack.services, { shopDomain: stack.shopDomain, request });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(await ordersWithReference(request.id)).toBe(1);
});

it("a 500 after the order was created: the order is found by its reference, never created twice (fixed coin)", async () => {
  await db().shop.update({ where: { shopDomain: stack.shopDomain }, data: { checkoutMode: "fixed_coin", sandboxFixedCurrency: "USDC_POLYGON" } });
  await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_500", count: 1, after_create: true });
  const { session, delivery } = await stack.standin.state.startPayment({ test: true });
  expect(delivery.status, delivery.body).toBe(200);
  // The listing has no web_url: the shopper pays on the app's own page for the adopted order.
  expect(delivery.redirectUrl).toContain(`${stack.app.url}/pay/`);
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  expect(payment.gatewayOrderId).toBeTruthy();
  expect(await ordersWithReference(session.id)).toBe(1);
  const again = await stack.standin.state.redeliverPayment(session.id);
  expect(again.delivery.redirectUrl).toBe(delivery.redirectUrl);
  expect(await ordersWithReference(session.id)).toBe(1);
  // What the shopper needs to pay comes from the gateway's listing: coin, address, exact amount.
  const adopted = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(adopted.inputCurrency).toBe("USDC_POLYGON");
  expect(adopted.address).toBeTruthy();
  expect(adopted.cryptoAmount).toMatch(/^\d+(\.\d+)?$/);
  const page = await (await fetch(delivery.redirectUrl!)).text();
  expect(page).toContain(adopted.address!);
  expect(page).toContain(adopted.cryptoAmount!);
});

it("a 500 after the coin picked on the app's page created the order: the order is adopted, never created twice", async () => {
  await db().shop.update({ where: { shopDomain: stack.shopDomain }, data: { checkoutMode: "app_page" } });
  const { session, delivery } = await stack.standin.state.startPayment({ test: true });
  expect(delivery.status).toBe(200);
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  expect(payment.gatewayOrderId).toBeNull();
  await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_500", count: 1, after_create: true });
  const picked = await createOrderWithCurrency(stack.services, payment.id, "LTC");
  expect(picked.ok).toBe(true);
  expect(await ordersWithReference(session.id)).toBe(1);
  const again = await createOrderWithCurrency(stack.services, payment.id, "LTC");
  expect(again).toMatchObject({ ok: false, reason: "already_chosen" });
  expect(await ordersWithReference(session.id)).toBe(1);
  const page = await (await fetch(delivery.redirectUrl!)).text();
  const adopted = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(page).toContain(adopted.address!);
});

it("when a coin pick's outcome stays unknown, the next pick looks the order up instead of creating another", async () => {
  await db().shop.update({ where: { shopDomain: stack.shopDomain }, data: { checkoutMode: "app_page" } });
  const { session } = await stack.standin.state.startPayment({ test: true });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_500", count: 1, after_create: true });
  await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.list", kind: "http_500", count: 12 });
  const first = await createOrderWithCurrency(stack.services, payment.id, "LTC");
  expect(first).toMatchObject({ ok: false, reason: "unavailable" });
  await stack.sandboxControl("/sandbox/faults", undefined, "DELETE");
  // Picked again at once: the order may still be on its way, so nothing is looked up or sent.
  expect(await createOrderWithCurrency(stack.services, payment.id, "LTC")).toMatchObject({ ok: false, reason: "unavailable" });
  const later = movableClock();
  later.offset = ORDER_MAY_STILL_APPEAR_MS + 1_000;
  const second = await createOrderWithCurrency(instance({ clock: later }), payment.id, "LTC");
  expect(second.ok).toBe(true);
  expect(await ordersWithReference(session.id)).toBe(1);
}, 60_000);

it("a 500 after an order without a coin was created: that order cannot be reached, so the shopper picks the coin on the app's page, and only that order can take money", async () => {
  await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_500", count: 1, after_create: true });
  const { session, delivery } = await stack.standin.state.startPayment({ test: true });
  expect(delivery.status, delivery.body).toBe(200);
  expect(delivery.redirectUrl).toContain(`${stack.app.url}/pay/`);
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id }, include: { events: true } });
  expect(payment).toMatchObject({ state: "started", gatewayOrderId: null, orderRequestedAt: null, attention: null });
  const unreachable = JSON.parse(payment.events.find((e) => e.type === "sent_to_payment_page")!.detail).unreachableOrder as string;
  expect(unreachable).toBeTruthy();
  expect(await ordersWithReference(session.id)).toBe(1);
  // Shopify's repeat gets the same answer, and nothing more is created.
  const again = await stack.standin.state.redeliverPayment(session.id);
  expect(again.delivery.redirectUrl).toBe(delivery.redirectUrl);
  expect(await ordersWithReference(session.id)).toBe(1);

  // A pick whose POST fails before anything is made finds only the coin-less order by the
  // reference, and does not take it for its own.
  await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_500", count: 1 });
  expect(await createOrderWithCurrency(stack.services, payment.id, "BTC")).toMatchObject({ ok: false, reason: "unavailable" });
  expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).gatewayOrderId).toBeNull();

  const later = movableClock();
  later.offset = ORDER_MAY_STILL_APPEAR_MS + 1_000;
  const picked = await createOrderWithCurrency(instance({ clock: later }), payment.id, "BTC");
  expect(picked.ok).toBe(true);
  const chosen = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(chosen).toMatchObject({ state: "awaiting_payment", inputCurrency: "BTC" });
  expect(chosen.gatewayOrderId).not.toBe(unreachable);
  expect(await ordersWithReference(session.id)).toBe(2);
});

it("a 500 before anything was created: the look-up proves there is no order, so it is created once", async () => {
  await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_500", count: 1 });
  const { session, delivery } = await stack.standin.state.startPayment({ test: true });
  expect(delivery.status, delivery.body).toBe(200);
  expect(await ordersWithReference(session.id)).toBe(1);
});

it("when the look-up cannot be made either, Shopify is asked to retry, and the retry creates the one order once it could have appeared", async () => {
  await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_500", count: 1 });
  await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.list", kind: "http_500", count: 12 });
  const { session, delivery } = await stack.standin.state.startPayment({ test: true });
  expect(delivery.status).toBe(503);
  await stack.sandboxControl("/sandbox/faults", undefined, "DELETE");
  expect(await ordersWithReference(session.id)).toBe(0);
  // Right after the request an empty listing would prove nothing: Shopify is asked to retry again.
  const early = await stack.standin.state.redeliverPayment(session.id);
  expect(early.delivery.status, early.delivery.body).toBe(503);
  expect(await ordersWithReference(session.id)).toBe(0);
  const clock = movableClock();
  clock.offset = ORDER_MAY_STILL_APPEAR_MS + 1_000;
  const retry = await startPaymentSession(instance({ clock }), { shopDomain: stack.shopDomain, request: paymentSessionRequestSchema.parse(session.request) });
  expect(retry.status, JSON.stringify(retry.body)).toBe(200);
  expect(await ordersWithReference(session.id)).toBe(1);
}, 60_000);

it("a 429 storm on order creation is waited out (Retry-After), then the order is created once", async () => {
  await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_429", count: 2 });
  const { session, delivery } = await stack.standin.state.startPayment({ test: true });
  expect(delivery.status, delivery.body).toBe(200);
  expect(await ordersWithReference(session.id)).toBe(1);
}, 30_000);

it("a session whose order takes longer than Shopify waits is answered 'in progress' (retry), and Shopify's retry gets the order once it is made, one order", async () => {
  // The gateway answers the order's creation with 429s for a while (each asking for a second).
  await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_429", count: 2 });
  const request = paymentSessionRequestSchema.parse(stack.standin.state.createPaymentSession({ test: true }).request);
  const first = await startPaymentSession(stack.services, { shopDomain: stack.shopDomain, request }, { answerWithinMs: 200 });
  expect(first).toMatchObject({ status: 503, body: { error: "in_progress" }, headers: { "Retry-After": "2" } });

  // Shopify's retries: asked to retry again while the order is made, then given it.
  const retried = await waitFor(
    async () => {
      const answer = await startPaymentSession(stack.services, { shopDomain: stack.shopDomain, request });
      return answer.status === 200 ? answer : null;
    },
    "Shopify's retry answered with the order",
    30_000,
  );
  expect((retried.body as { redirect_url: string }).redirect_url).toMatch(/^http/);
  expect(await ordersWithReference(request.id)).toBe(1);
}, 60_000);

it("failing reads on the shopper's return do not lose the payment: the webhook still settles it", async () => {
  const { session } = await stack.standin.state.startPayment({ test: true });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  await stack.sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "choose_currency", currency: "BTC" });
  await stack.sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "pay", amount: "exact" });
  await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.info", kind: "http_500", count: 20 });
  const back = await fetch(stack.services.links.returnUrl(payment, "standby"), { redirect: "manual" });
  expect(back.status).toBeLessThan(500);
  await stack.sandboxControl("/sandbox/faults", undefined, "DELETE");
  await stack.sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "confirm" });
  await waitFor(async () => stack.standin.state.session(session.id)?.state.code === "RESOLVED", "resolve after read faults", 30_000);
}, 60_000);

it("a request whose claim was taken over while it waited for its quota slot neither sends its order nor overwrites the answer of the request that took over", async () => {
  // One clock for both instances: Shopify's retry comes after the first request's claim has lapsed.
  let offset = 0;
  const clock = { now: () => new Date(Date.now() + offset) };
  const base = stack.services;
  // The first request's quota slot is held up (a long wait for quota) until the retry is done.
  const slotReached = gate();
  const slotReleased = gate();
  let holding = true;
  async function heldUp<T>(statement: Prisma.Sql, run: () => Promise<T>): Promise<T> {
    if (holding && (statement.sql.includes('"GatewayCall"') || statement.sql.includes("takeGatewayCall"))) {
      holding = false;
      slotReached.open();
      await slotReleased.opened;
    }
    return run();
  }
  const sql: PlainSql = {
    kind: base.sql.kind,
    execute: (statement) => heldUp(statement, () => base.sql.execute(statement)),
    query: (statement) => heldUp(statement, () => base.sql.query(statement)),
    executeInTransaction: (statements) => base.sql.executeInTransaction(statements),
    inTransaction: (work) => base.sql.inTransaction(work),
  };
  const session = stack.standin.state.createPaymentSession({ test: true });
  const request = paymentSessionRequestSchema.parse(session.request);

  const slotsBefore = await criticalSlots();
  const first = startPaymentSession(instance({ clock, sql }), { shopDomain: stack.shopDomain, request });
  await slotReached.opened;
  await waitFor(() => db().payment.findFirst({ where: { shopifyPaymentId: request.id } }), "the first request's record");
  offset = 10 * 60_000;
  const retried = await startPaymentSession(instance({ clock }), { shopDomain: stack.shopDomain, request });
  expect(retried.status, JSON.stringify(retried.body)).toBe(200);
  slotReleased.open();

  // The first request finds the payment taken over: it sends nothing and answers as the retry did.
  await expectRetryAnswerStands({ first, retried, sessionId: session.id, ordersMade: 1 });
  // And gives its slot back: only the order sent counts against the device's creations.
  expect(await criticalSlots()).toBe(slotsBefore + 1);
});

it("a request whose claim was taken over while its order was on the way cannot overwrite the answer of the request that took over", async () => {
  const clock = movableClock();
  // The first request's POST /orders/ reaches the gateway only after the retry has answered.
  const post = heldOrderCreations();
  const session = stack.standin.state.createPaymentSession({ test: true });
  const request = paymentSessionRequestSchema.parse(session.request);

  const first = startPaymentSession(instance({ clock, fetch: post.fetch }), { shopDomain: stack.shopDomain, request });
  await post.reached;
  clock.offset = 10 * 60_000;
  const retried = await startPaymentSession(instance({ clock }), { shopDomain: stack.shopDomain, request });
  expect(retried.status, JSON.stringify(retried.body)).toBe(200);
  post.release();

  // Its order is made, but the answer stored first stands: the first request answers with it,
  // and only the retry's order is recorded or handed out (the other expires unused).
  await expectRetryAnswerStands({ first, retried, sessionId: session.id, ordersMade: 2 });
});

it("a request still at work renews its claim, so a repeat arriving after the claim's first term waits for its answer instead of taking over", async () => {
  const clock = movableClock();
  const post = heldOrderCreations();
  const session = stack.standin.state.createPaymentSession({ test: true });
  const request = paymentSessionRequestSchema.parse(session.request);
  // A gateway that takes its time, within the client's timeout (and Shopify waiting for it as
  // long: the request's own answer is checked below).
  const first = startPaymentSession(instance({ clock, fetch: post.fetch, gatewayTimeoutMs: 30_000 }), { shopDomain: stack.shopDomain, request }, { answerWithinMs: 60_000 });
  await post.reached;
  const written = (await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: request.id } })).sessionClaimUntil!;
  // The gateway call is slow: by the next renewal, the claim as first written is nearly over.
  clock.offset = written.getTime() - Date.now() - 2_000;
  await waitFor(async () => ((await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: request.id } })).sessionClaimUntil! > written) || null, "the claim renewed", 15_000);
  // Past the first term: a repeat finds the claim held and asks Shopify to retry later.
  clock.offset = written.getTime() - Date.now() + 5_000;
  let reads = 0;
  const counted = db().$extends({
    query: {
      payment: {
        findUniqueOrThrow({ args, query }) {
          reads++;
          return query(args);
        },
      },
    },
  }) as unknown as Database;
  const repeat = await startPaymentSession(instance({ clock, db: counted }), { shopDomain: stack.shopDomain, request });
  expect(repeat).toMatchObject({ status: 503, body: { error: "in_progress" } });
  // Its 8 s wait read the row a few times a second, not every 50 ms (160 times).
  expect(reads).toBeGreaterThan(5);
  expect(reads).toBeLessThanOrEqual(50);
  post.release();
  const answered = await first;
  expect(answered.status).toBe(200);
  expect(await ordersWithReference(request.id)).toBe(1);
  expect((await stack.standin.state.redeliverPayment(session.id)).delivery.redirectUrl).toBe(answered.body.redirect_url);
}, 40_000);

/**
 * After Shopify's retry took a session over from a slowed first request: the first request
 * answers as the retry did, the payment holds the retry's order and answer with one
 * order_created entry, and Shopify's repeats get that answer too.
 */
async function expectRetryAnswerStands(taken: { first: Promise<SessionAnswer>; retried: SessionAnswer; sessionId: string; ordersMade: number }) {
  const { retried, sessionId } = taken;
  expect(await taken.first).toEqual(retried);
  expect(await ordersWithReference(sessionId)).toBe(taken.ordersMade);
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: sessionId }, include: { events: true } });
  expect(payment.gatewayWebUrl).toBe(retried.body.redirect_url);
  expect(JSON.parse(payment.responseBody!)).toEqual(retried.body);
  expect(payment.events.filter((e) => e.type === "order_created")).toHaveLength(1);
  const again = await stack.standin.state.redeliverPayment(sessionId);
  expect(again.delivery.redirectUrl).toBe(retried.body.redirect_url);
}

it("a create that times out is not followed by another in the same request: Shopify's retry finds the order by its reference", async () => {
  // A coin is fixed, so the order found by its reference can be paid on the app's own page.
  await db().shop.update({ where: { shopDomain: stack.shopDomain }, data: { checkoutMode: "fixed_coin", sandboxFixedCurrency: "USDC_POLYGON" } });
  // The gateway is still working on the first POST when the client gives up on it: the order
  // appears only after the request has answered.
  const lateRelease = gate();
  let late: Promise<Response> | null = null;
  let posts = 0;
  const slowGateway: typeof fetch = async (input, init) => {
    if (isOrderCreation(input, init) && ++posts === 1) {
      const { signal, ...rest } = init!;
      late = lateRelease.opened.then(() => fetch(input, rest));
      return new Promise<Response>((_, reject) => signal!.addEventListener("abort", () => reject(signal!.reason)));
    }
    return fetch(input, init);
  };
  const services = instance({ fetch: slowGateway, gatewayTimeoutMs: 1_000 });
  const session = stack.standin.state.createPaymentSession({ test: true });
  const request = paymentSessionRequestSchema.parse(session.request);

  const first = await startPaymentSession(services, { shopDomain: stack.shopDomain, request });
  expect(first).toMatchObject({ status: 503, body: { error: "gateway_unavailable" }, headers: { "Retry-After": expect.any(String) } });
  expect(posts).toBe(1);
  const waiting = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: request.id } });
  expect(waiting).toMatchObject({ responseStatus: null, gatewayOrderId: null, sessionClaimUntil: null });
  expect(waiting.orderRequestedAt).not.toBeNull();

  // Shopify's retry comes while the gateway is still at work on the first POST: a listing
  // would show no order yet, which proves nothing so soon, so nothing is looked up or created.
  const early = await stack.standin.state.redeliverPayment(session.id);
  expect(early.delivery.status, early.delivery.body).toBe(503);
  expect(await ordersWithReference(request.id)).toBe(0);
  expect(posts).toBe(1);

  lateRelease.open();
  expect((await late!)?.status).toBe(200);
  expect(await ordersWithReference(request.id)).toBe(1);
  const later = movableClock();
  later.offset = ORDER_MAY_STILL_APPEAR_MS + 1_000;
  const retry = await startPaymentSession(instance({ clock: later }), { shopDomain: stack.shopDomain, request });
  expect(retry.status, JSON.stringify(retry.body)).toBe(200);
  expect(retry.body.redirect_url).toContain(`${stack.app.url}/pay/`);
  expect(await ordersWithReference(request.id)).toBe(1);
  const adopted = await db().payment.findUniqueOrThrow({ where: { id: waiting.id } });
  expect(adopted.gatewayOrderId).toBeTruthy();
  expect(adopted.inputCurrency).toBe("USDC_POLYGON");
});

it("a create that timed out and never reached the gateway: once the order could have appeared, Shopify's retry creates it once", async () => {
  const clock = movableClock();
  const lost: typeof fetch = async (input, init) => {
    if (isOrderCreation(input, init)) return new Promise<Response>((_, reject) => init!.signal!.addEventListener("abort", () => reject(init!.signal!.reason)));
    return fetch(input, init);
  };
  const session = stack.standin.state.createPaymentSession({ test: true });
  const request = paymentSessionRequestSchema.parse(session.request);
  const first = await startPaymentSession(instance({ clock, fetch: lost, gatewayTimeoutMs: 500 }), { shopDomain: stack.shopDomain, request });
  expect(first).toMatchObject({ status: 503, body: { error: "gateway_unavailable" } });
  clock.offset = ORDER_MAY_STILL_APPEAR_MS + 1_000;
  const retried = await startPaymentSession(instance({ clock }), { shopDomain: stack.shopDomain, request });
  expect(retried.status, JSON.stringify(retried.body)).toBe(200);
  expect(await ordersWithReference(request.id)).toBe(1);
});

it("an HTML 404 page in front of the gateway on order creation is no refusal: Shopify is asked to retry, and the retry creates the order once", async () => {
  const clock = movableClock();
  let posts = 0;
  const rerouted: typeof fetch = async (input, init) => {
    if (isOrderCreation(input, init) && ++posts === 1) {
      return new Response("<html><head><title>404 Not Found</title></head><body><h1>404 Not Found</h1><hr>nginx</body></html>", { status: 404, headers: { "Content-Type": "text/html" } });
    }
    return fetch(input, init);
  };
  const session = stack.standin.state.createPaymentSession({ test: true });
  const request = paymentSessionRequestSchema.parse(session.request);
  const first = await startPaymentSession(instance({ clock, fetch: rerouted }), { shopDomain: stack.shopDomain, request });
  // Not a final 422: the shopper could still pay, and nothing says the gateway saw the request.
  expect(first).toMatchObject({ status: 503, body: { error: "gateway_unavailable" } });
  const waiting = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: request.id } });
  expect(waiting).toMatchObject({ state: "started", responseStatus: null, gatewayOrderId: null });
  clock.offset = ORDER_MAY_STILL_APPEAR_MS + 1_000;
  const retried = await startPaymentSession(instance({ clock, fetch: rerouted }), { shopDomain: stack.shopDomain, request });
  expect(retried.status, JSON.stringify(retried.body)).toBe(200);
  expect(posts).toBe(2);
  expect(await ordersWithReference(request.id)).toBe(1);
});

it("the time an order may still appear counts from the last POST that may have reached the gateway, not the first", async () => {
  const session = stack.standin.state.createPaymentSession({ test: true });
  const request = paymentSessionRequestSchema.parse(session.request);
  let posts = 0;
  // The first POST is throttled; the resend a second later reaches the gateway and is never answered.
  const throttledThenLost: typeof fetch = async (input, init) => {
    if (!isOrderCreation(input, init)) return fetch(input, init);
    if (++posts === 1) return new Response(JSON.stringify({ detail: "Request was throttled." }), { status: 429, headers: { "content-type": "application/json", "retry-after": "1" } });
    return new Promise<Response>((_, reject) => init!.signal!.addEventListener("abort", () => reject(init!.signal!.reason)));
  };
  const first = await startPaymentSession(instance({ fetch: throttledThenLost, gatewayTimeoutMs: 500 }), { shopDomain: stack.shopDomain, request });
  expect(first).toMatchObject({ status: 503, body: { error: "gateway_unavailable" } });
  expect(posts).toBe(2);
  const waiting = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: request.id } });
  expect(waiting.orderRequestedAt!.getTime()).toBeGreaterThanOrEqual(waiting.createdAt.getTime() + 750);
  // Shopify's retry comes just over ORDER_MAY_STILL_APPEAR_MS after the record, but not after the resend.
  const clock = movableClock();
  clock.offset = waiting.createdAt.getTime() + ORDER_MAY_STILL_APPEAR_MS + 200 - Date.now();
  const retried = await startPaymentSession(instance({ clock }), { shopDomain: stack.shopDomain, request });
  expect(retried).toMatchObject({ status: 503, body: { error: "gateway_unavailable" } });
  expect(await ordersWithReference(request.id)).toBe(0);
}, 20_000);

it("a 429 is waited out and the order sent again only while the request still holds the payment", async () => {
  const session = stack.standin.state.createPaymentSession({ test: true });
  const request = paymentSessionRequestSchema.parse(session.request);
  let posts = 0;
  // The gateway throttles the first POST; meanwhile another request takes the payment over.
  const throttled: typeof fetch = async (input, init) => {
    if (isOrderCreation(input, init) && ++posts === 1) {
      await db().payment.updateMany({ where: { shopifyPaymentId: request.id }, data: { sessionClaimToken: "another-request", sessionClaimUntil: new Date(Date.now() + 60_000) } });
      return new Response(JSON.stringify({ detail: "Request was throttled." }), { status: 429, headers: { "content-type": "application/json", "retry-after": "1" } });
    }
    return fetch(input, init);
  };
  const answered = await startPaymentSession(instance({ fetch: throttled }), { shopDomain: stack.shopDomain, request });
  expect(answered).toMatchObject({ status: 503, body: { error: "in_progress" } });
  expect(posts).toBe(1);
  expect(await ordersWithReference(request.id)).toBe(0);
}, 20_000);

it("a coin pick whose claim was taken over while its order was on the way leaves the payment to the pick that took over", async () => {
  await db().shop.update({ where: { shopDomain: stack.shopDomain }, data: { checkoutMode: "app_page" } });
  const { session } = await stack.standin.state.startPayment({ test: true });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  let offset = 0;
  const clock = { now: () => new Date(Date.now() + offset) };
  const held = heldOrderCreations();

  const first = createOrderWithCurrency(instance({ clock, fetch: held.fetch }), payment.id, "LTC");
  await held.reached;
  offset = 10 * 60_000;
  const second = await createOrderWithCurrency(instance({ clock }), payment.id, "BTC");
  expect(second.ok).toBe(true);
  held.release();

  expect(await first).toMatchObject({ ok: false, reason: "already_chosen" });
  const chosen = await db().payment.findUniqueOrThrow({ where: { id: payment.id }, include: { events: true } });
  expect(chosen).toMatchObject({ inputCurrency: "BTC", gatewayOrderId: second.ok ? second.payment.gatewayOrderId : "none", sessionClaimToken: null });
  expect(chosen.events.filter((e) => e.type === "order_created")).toHaveLength(1);
});

it("a coin pick racing the reconciler's rejection of a page left a day without a coin does not bring the payment back", async () => {
  await db().shop.update({ where: { shopDomain: stack.shopDomain }, data: { checkoutMode: "app_page" } });
  const { session } = await stack.standin.state.startPayment({ test: true });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  const clock = movableClock();
  clock.offset = 25 * 3_600_000;
  const held = heldOrderCreations();

  const pick = createOrderWithCurrency(instance({ clock, fetch: held.fetch }), payment.id, "BTC");
  await held.reached;
  // The shopper's pick reaches the gateway just as the reconciler gives the page up.
  await reconcileOnce(instance({ clock }), { worker: "t", force: true });
  expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).state).toBe("failed");
  held.release();

  expect(await pick).toMatchObject({ ok: false, reason: "not_open" });
  const after = await db().payment.findUniqueOrThrow({ where: { id: payment.id }, include: { events: true } });
  expect(after).toMatchObject({ state: "failed", gatewayOrderId: null, sessionClaimToken: null });
  expect(after.events.filter((e) => e.type === "order_created")).toHaveLength(0);
  // A pick after the rejection is refused before anything is sent.
  expect(await createOrderWithCurrency(instance({ clock }), payment.id, "BTC")).toMatchObject({ ok: false, reason: "not_open" });
});

it("the reconciler abandons a session left without an answer only while no request holds it, and a late repeat gets the abandoned answer without an order", async () => {
  const hourAndMore = new Date(Date.now() - 2 * 3_600_000);
  // Shopify's last retry is creating the order when the reconciler looks at the session.
  const held = heldOrderCreations();
  const session = stack.standin.state.createPaymentSession({ test: true });
  const request = paymentSessionRequestSchema.parse(session.request);
  const working = startPaymentSession(instance({ fetch: held.fetch }), { shopDomain: stack.shopDomain, request });
  await held.reached;
  await db().payment.updateMany({ where: { shopifyPaymentId: request.id }, data: { createdAt: hourAndMore } });
  await reconcileOnce(stack.services, { worker: "t" });
  expect(await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: request.id } })).toMatchObject({ state: "started", responseStatus: null });
  held.release();
  expect((await working).status).toBe(200);
  const served = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: request.id }, include: { events: true } });
  expect(served.state).toBe("awaiting_payment");
  expect(served.events.map((e) => e.type)).not.toContain("abandoned");

  // A session whose attempts all failed, with nobody at work on it, is abandoned.
  await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_500", count: 2 });
  const { session: failing, delivery } = await stack.standin.state.startPayment({ test: true });
  expect(delivery.status).toBe(503);
  await db().payment.updateMany({ where: { shopifyPaymentId: failing.id }, data: { createdAt: hourAndMore } });
  await reconcileOnce(stack.services, { worker: "t" });
  expect(await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: failing.id } })).toMatchObject({ state: "not_started", responseStatus: ABANDONED_SESSION_ANSWER.status });
  const late = await stack.standin.state.redeliverPayment(failing.id);
  expect(late.delivery.status).toBe(ABANDONED_SESSION_ANSWER.status);
  expect(JSON.parse(late.delivery.body)).toMatchObject({ error: "session_abandoned" });
  expect(await ordersWithReference(failing.id)).toBe(0);
});
