// The coin pick on the app's own payment page against what happens around it: a pick that
// completes while the reconciler is giving up the page as coin-less (read before the pick,
// written after), the shopper's retry after the gateway answered 500 and made no order, a
// pick that adopts the order an earlier pick made without learning it (its own coin is recorded),
// and a pick that read the payment before such an earlier pick's whole attempt.
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { finalMessageKey } from "../../app/payments/outbox";
import { reconcileOnce } from "../../app/payments/reconcile";
import { createOrderWithCurrency, ORDER_MAY_STILL_APPEAR_MS } from "../../app/payments/start-payment-session";
import { createServices, type AppServices } from "../../app/services.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { startStack, type Stack } from "../support/stack";

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
  await stack.services.db.shop.update({ where: { shopDomain: stack.shopDomain }, data: { checkoutMode: "app_page" } });
}, 60_000);

afterEach(async () => {
  await stack.sandboxControl("/sandbox/faults", undefined, "DELETE");
});

afterAll(async () => {
  await stack?.close();
});

const db = () => stack.services.db;

/** The app's services on the stack's database with another clock (a second instance); `once`: gateway calls not retried. */
function instance(clock?: { now(): Date }, options: { once?: boolean } = {}): AppServices {
  const base = stack.services;
  return createServices(base.env, { db: base.db, sql: base.sql, logger: stack.logger, ...(clock ? { clock } : {}), ...(options.once ? { gatewayRetry: { maxAttempts: 1 } } : {}) });
}

/** The gateway's orders made for this Shopify payment session (its id is the reference). */
async function gatewayOrdersOf(reference: string): Promise<{ identifier: string; reference: string | null; currency_id: string | null; status: string }[]> {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  const key = stack.services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"));
  const response = await fetch(`${stack.sandbox.baseUrl}/orders/`, { headers: { "X-Device-Id": key } });
  const orders = (await response.json()) as { identifier: string; reference: string | null; currency_id: string | null; status: string }[];
  return orders.filter((o) => o.reference === reference);
}

it("a coin picked after the reconciler read the page as coin-less (a day old) leaves the payment open, with nothing rejected at Shopify", async () => {
  const { session, delivery } = await stack.standin.state.startPayment({ test: true, locale: "en" });
  expect(delivery.status, delivery.body).toBe(200);
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  expect(payment.gatewayOrderId).toBeNull();
  const clock = { now: () => new Date(Date.now() + 25 * 3_600_000) };
  const picker = instance(clock);
  const reconciler = instance(clock);

  // The reconciler reads the shop's open payments; the shopper's pick completes right after
  // that read and before the reconciler acts on it (the pick is run inside the read).
  let picked: Awaited<ReturnType<typeof createOrderWithCurrency>> | null = null;
  const realPayments = reconciler.db.payment;
  const payments = new Proxy(realPayments, {
    get(target, property, receiver) {
      if (property !== "findMany") return Reflect.get(target, property, receiver) as unknown;
      return async (args: { where?: { state?: unknown; gatewayEnv?: unknown } }) => {
        const rows = await (target.findMany as (a: unknown) => Promise<unknown[]>)(args);
        const readsOpenPayments = args?.where?.gatewayEnv === "sandbox" && typeof args?.where?.state === "object" && args.where.state !== null && "in" in args.where.state;
        if (readsOpenPayments && picked === null) picked = await createOrderWithCurrency(picker, payment.id, "BTC");
        return rows;
      };
    },
  });
  const db2 = new Proxy(reconciler.db, { get: (target, property, receiver) => (property === "payment" ? payments : (Reflect.get(target, property, receiver) as unknown)) });
  await reconcileOnce({ ...reconciler, db: db2 as typeof reconciler.db }, { worker: "coin-pick-races", force: true });

  // The shopper's pick made the order and the page now shows its address and amount.
  expect(picked).toMatchObject({ ok: true });
  const after = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(after.gatewayOrderId).not.toBeNull();
  expect(after.address).not.toBeNull();
  // A payment whose coin was just picked is left open (its order can take money).
  const reject = await db().outboxMessage.findUnique({ where: { dedupeKey: finalMessageKey(payment.id) } });
  expect({ state: after.state, rejectQueued: reject !== null }).toEqual({ state: "awaiting_payment", rejectQueued: false });

  // (check) One still coin-less after a day is still given up.
  const { session: idle, delivery: idleDelivery } = await stack.standin.state.startPayment({ test: true, locale: "en" });
  expect(idleDelivery.status, idleDelivery.body).toBe(200);
  const idlePayment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: idle.id } });
  await reconcileOnce(reconciler, { worker: "coin-pick-races", force: true });
  expect((await db().payment.findUniqueOrThrow({ where: { id: idlePayment.id } })).state).toBe("failed");
  expect(await db().outboxMessage.findUnique({ where: { dedupeKey: finalMessageKey(idlePayment.id) } })).not.toBeNull();
}, 60_000);

it("after a gateway 500 that made no order (the listing proves it), the shopper's retry of the pick goes through at once", async () => {
  const { session, delivery } = await stack.standin.state.startPayment({ test: true, locale: "en", amount: "25.00", currency: "EUR" });
  expect(delivery.status, delivery.body).toBe(200);
  const pick = (symbol: string) => fetch(delivery.redirectUrl!, { method: "POST", body: new URLSearchParams({ symbol }), redirect: "manual" });
  await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_500", count: 1 });
  const failed = await pick("LTC");
  expect(failed.status).toBe(503);
  expect(await failed.text()).toContain("Please try again in a moment.");
  expect(await gatewayOrdersOf(session.id)).toHaveLength(0);

  // The shopper presses the coin again, as told: nothing is left to look up, so the order is made at once.
  const retried = await pick("LTC");
  expect(retried.status).toBe(303);
  expect(await gatewayOrdersOf(session.id)).toHaveLength(1);
  expect(await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } })).toMatchObject({ state: "awaiting_payment", inputCurrency: "LTC" });
}, 60_000);

/**
 * A payment on the app's page whose BTC pick made its order at the gateway without learning it:
 * the gateway answered 500 after making it, and the listing that would have found it failed.
 */
async function pickedWithUnknownOutcome() {
  const { session, delivery } = await stack.standin.state.startPayment({ test: true, locale: "en", amount: "25.00", currency: "EUR" });
  expect(delivery.status, delivery.body).toBe(200);
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_500", count: 1, after_create: true });
  await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.list", kind: "http_500", count: 1 });
  expect(await createOrderWithCurrency(instance(undefined, { once: true }), payment.id, "BTC")).toMatchObject({ ok: false, reason: "unavailable" });
  await stack.sandboxControl("/sandbox/faults", undefined, "DELETE");
  return { session, payment };
}

it("a pick that adopts the order an earlier pick made without learning it records that order's coin, not the one just picked", async () => {
  const { session, payment } = await pickedWithUnknownOutcome();
  expect(await gatewayOrdersOf(session.id)).toMatchObject([{ currency_id: "BTC" }]);
  // The order may exist: the marker stays, so the next pick looks it up first.
  expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).orderRequestedAt).not.toBeNull();

  // Later the shopper picks ETH: the BTC order is found and adopted (no second order).
  const later = instance({ now: () => new Date(Date.now() + ORDER_MAY_STILL_APPEAR_MS + 5_000) });
  const adopted = await createOrderWithCurrency(later, payment.id, "ETH");
  expect(adopted).toMatchObject({ ok: true, payment: { inputCurrency: "BTC", state: "awaiting_payment" } });
  expect(await gatewayOrdersOf(session.id)).toHaveLength(1);
  const events = await db().paymentEvent.findMany({ where: { paymentId: payment.id, type: "order_created" } });
  expect(events.map((e) => JSON.parse(e.detail) as unknown)).toEqual([{ currency: "BTC", page: "app", adopted: true }]);
}, 60_000);

it("a pick that finds the order an earlier pick made ended unpaid (expired, nothing received) makes a new one with the coin just picked", async () => {
  const { session, payment } = await pickedWithUnknownOutcome();
  const [earlier] = await gatewayOrdersOf(session.id);
  // The shopper comes back after its time ran out.
  await stack.sandboxControl(`/sandbox/orders/${earlier!.identifier}/actions`, { action: "expire" });
  expect(await gatewayOrdersOf(session.id)).toMatchObject([{ currency_id: "BTC", status: "EX" }]);

  const later = instance({ now: () => new Date(Date.now() + ORDER_MAY_STILL_APPEAR_MS + 5_000) });
  const picked = await createOrderWithCurrency(later, payment.id, "ETH");
  expect(picked).toMatchObject({ ok: true, payment: { inputCurrency: "ETH", state: "awaiting_payment", gatewayStatus: "PE" } });
  expect(picked.ok && picked.payment.gatewayOrderId).not.toBe(earlier!.identifier);
  expect((await gatewayOrdersOf(session.id)).map((o) => o.currency_id).sort()).toEqual(["BTC", "ETH"]);
}, 60_000);

it("a pick that read the payment just before another pick's whole attempt (its order made, the answer lost) looks that order up once it holds the payment, instead of making a second", async () => {
  const { session, delivery } = await stack.standin.state.startPayment({ test: true, locale: "en", amount: "25.00", currency: "EUR" });
  expect(delivery.status, delivery.body).toBe(200);
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });

  // Pick B reads the payment (no order requested yet). Pick A's whole attempt comes between that
  // read and B's claim: A claims, the gateway makes its BTC order but answers 500, the listing
  // cannot be read, and A releases the payment keeping orderRequestedAt (the order may exist).
  let first: Awaited<ReturnType<typeof createOrderWithCurrency>> | null = null;
  const later = instance({ now: () => new Date(Date.now() + ORDER_MAY_STILL_APPEAR_MS + 5_000) });
  const realPayments = later.db.payment;
  const payments = new Proxy(realPayments, {
    get(target, property, receiver) {
      if (property !== "findUnique") return Reflect.get(target, property, receiver) as unknown;
      return async (args: unknown) => {
        const row = await (target.findUnique as (a: unknown) => Promise<unknown>)(args);
        if (first === null) {
          await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_500", count: 1, after_create: true });
          await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.list", kind: "http_500", count: 1 });
          first = await createOrderWithCurrency(instance(undefined, { once: true }), payment.id, "BTC");
          await stack.sandboxControl("/sandbox/faults", undefined, "DELETE");
        }
        return row;
      };
    },
  });
  const db2 = new Proxy(later.db, { get: (target, property, receiver) => (property === "payment" ? payments : (Reflect.get(target, property, receiver) as unknown)) });
  const picked = await createOrderWithCurrency({ ...later, db: db2 as typeof later.db }, payment.id, "ETH");

  expect(first).toMatchObject({ ok: false, reason: "unavailable" });
  // B found A's order and kept it: one gateway order for the payment, with A's coin.
  expect((await gatewayOrdersOf(session.id)).map((order) => order.currency_id)).toEqual(["BTC"]);
  expect(picked).toMatchObject({ ok: true, payment: { inputCurrency: "BTC", state: "awaiting_payment" } });
}, 60_000);
