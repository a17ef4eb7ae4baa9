// A payment settled by a signed webhook waits for a read of its order to verify it. When the
// gateway returns that order in a shape the app cannot read, a read again would meet the same:
// the payment is flagged for a person (the webhook's status could not be verified) and is not
// read again at every pass for ever, which would also keep the credentials it was made on and
// the shopper's details past their time. Whether the order came in a listing (the reconciler's,
// or a shopper's return's) or was looked up alone. Likewise one whose order no read has reached for 7 days (its reads all failed, or it
// was never listed nor looked up). The gateway is a scripted server over real HTTP; the
// database is SQLite.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGatewayClient } from "../../app/gateway/client";
import { createLogger } from "../../app/lib/logger.server";
import type { GatewayDirectory, PaymentsDeps, ShopGatewayAccess } from "../../app/payments/deps";
import { SHOPPER_WAITING_READ } from "../../app/payments/check-payment";
import { readShopOrdersAtReturn, reconcileOnce } from "../../app/payments/reconcile";
import { fixtureBodyPlain } from "../gateway/support/fixtures";
import { json, startScriptedServer, type ScriptedServer } from "../gateway/support/scripted-server";
import { paymentColumns } from "../support/payment-rows";
import { ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedServer();
});
afterAll(async () => {
  await server.close();
});

const rows = rowsDatabaseForFile(ROW_DATABASES[0]!, { shopDomain: "unreadable-order.myshopify.com", webhookToken: "unreadable-order-token-01" });
let opened: OpenedRows;
beforeAll(() => void (opened = rows()));

const DEVICE_KEY = "6c9bb3c5-7d3a-4f1e-9b2a-1f0c8d7e6a5b";
const UNVERIFIABLE =
  "A signed gateway webhook reported status CO, but the gateway's record of this order is in a shape the app cannot read, so the status could not be verified. Check it in the gateway dashboard before shipping or refunding.";

/** A payment a signed webhook marked paid two hours ago, waiting for a read to verify it. */
async function paidUnverified(at: number) {
  const orderId = randomUUID();
  return opened.db.payment.create({
    data: paymentColumns(opened.shopId, { state: "paid", gatewayOrderId: orderId, gatewayStatus: "CO", unverifiedSince: new Date(at - 2 * 3_600_000), createdAt: new Date(at - 2 * 3_600_000) }),
  });
}

/** The reconciler's dependencies, its gateway the scripted server answering its next read with `orders`. */
function depsAnswering(orders: unknown[]) {
  server.script(json(200, orders));
  const client = createGatewayClient({ baseUrl: `${server.origin}/api/v1`, deviceKey: DEVICE_KEY, timeoutMs: 2_000, retry: { maxAttempts: 1 }, sleep: async () => {} });
  const access: ShopGatewayAccess = { env: "sandbox", client, secretKeyHex: "00".repeat(32), deviceKeyHash: "device" };
  const gateways: GatewayDirectory = { forShop: (_shop, env) => (env === "sandbox" ? access : null), retiredFor: () => null, currencies: async () => null };
  return (at: number) => ({ db: opened.db, sql: opened.sql, clock: { now: () => new Date(at) }, logger: createLogger({ level: "debug", sink: () => {} }), gateways }) as unknown as PaymentsDeps;
}

/** The documented order, as this payment's and completed; `fields` over it. */
function listedOrder(orderId: string, fields: Record<string, unknown> = {}) {
  const [documented] = fixtureBodyPlain("orders-list.response.docs-b4bit.json") as Record<string, unknown>[];
  return { ...documented, identifier: orderId, status: "CO", fiat_amount: 49.9, fiat: "EUR", ...fields };
}

async function expectFlaggedOnce(paymentId: string) {
  const after = await opened.db.payment.findUniqueOrThrow({ where: { id: paymentId }, include: { events: true } });
  expect(after).toMatchObject({ state: "paid", attention: "webhook_mismatch", attentionDetail: UNVERIFIABLE, unverifiedSince: null });
  expect(after.events.filter((e) => e.type === "attention")).toHaveLength(1);
}

it("looked up alone (GET /orders/info), an order returned unreadable flags its payment once, which no longer waits to be verified", async () => {
  const now = Date.now();
  const paid = await paidUnverified(now);
  const deps = depsAnswering([listedOrder(paid.gatewayOrderId!, { fiat_amount: "not a number" })]);
  await reconcileOnce(deps(now), { worker: "unreadable", force: true });
  await expectFlaggedOnce(paid.id);

  // An hour on, nothing is left to verify for this shop: the gateway is not asked again.
  const calls = server.requests.length;
  await reconcileOnce(deps(now + 3_600_000), { worker: "unreadable" });
  expect(server.requests.length).toBe(calls);
});

it("in a listing, an order returned unreadable flags its payment once, and the other orders listed verify theirs", async () => {
  const now = Date.now();
  const odd = await paidUnverified(now);
  const fine = await paidUnverified(now);
  const deps = depsAnswering([listedOrder(odd.gatewayOrderId!, { fiat_amount: "not a number" }), listedOrder(fine.gatewayOrderId!)]);
  const calls = server.requests.length;
  await reconcileOnce(deps(now), { worker: "unreadable", force: true });
  expect(server.requests.slice(calls).map((r) => r.url.split("?")[0])).toEqual(["/api/v1/orders/"]);
  await expectFlaggedOnce(odd.id);
  expect(await opened.db.payment.findUniqueOrThrow({ where: { id: fine.id } })).toMatchObject({ state: "paid", attention: null, unverifiedSince: null });
});

const NEVER_READ =
  "A signed gateway webhook reported status CO, but no read of this order has verified it in 7 days (the gateway failed or refused the reads, or they could not be made), so the status could not be verified. Check it in the gateway dashboard before shipping or refunding.";

/** A payment a signed webhook marked paid `ago` ms before `at`. */
async function paidUnverifiedSince(at: number, ago: number) {
  const since = new Date(at - ago);
  return opened.db.payment.create({ data: paymentColumns(opened.shopId, { state: "paid", gatewayOrderId: randomUUID(), gatewayStatus: "CO", unverifiedSince: since, createdAt: since }) });
}

it("a payment whose order no read has reached for 7 days (a listing without it, its look-up failing) is flagged once, and no longer waits; before that it waits", async () => {
  const now = Date.now();
  const recent = await paidUnverifiedSince(now, 6 * 86_400_000);
  const old = await paidUnverifiedSince(now, 7 * 86_400_000 + 60_000);
  // The listing answers without either order; each look-up fails (the scripted server answers 599 when unscripted).
  const deps = depsAnswering([]);
  await reconcileOnce(deps(now), { worker: "unread", force: true });
  const after = await opened.db.payment.findUniqueOrThrow({ where: { id: old.id }, include: { events: true } });
  expect(after).toMatchObject({ state: "paid", attention: "webhook_mismatch", attentionDetail: NEVER_READ, unverifiedSince: null });
  expect(after.events.filter((e) => e.type === "attention")).toHaveLength(1);
  expect(await opened.db.payment.findUniqueOrThrow({ where: { id: recent.id } })).toMatchObject({ attention: null, unverifiedSince: recent.unverifiedSince });
  await opened.db.payment.deleteMany({ where: { id: { in: [recent.id, old.id] } } });
});

it("a payment settled by a signed webhook 7 days ago, while every read of the gateway fails, is flagged once, and no longer waits", async () => {
  const now = Date.now();
  const old = await paidUnverifiedSince(now, 7 * 86_400_000 + 60_000);
  // Nothing answers: the listing and the look-ups all fail.
  const client = createGatewayClient({ baseUrl: `${server.origin}/api/v1`, deviceKey: DEVICE_KEY, timeoutMs: 2_000, retry: { maxAttempts: 1 }, sleep: async () => {} });
  const access: ShopGatewayAccess = { env: "sandbox", client, secretKeyHex: "00".repeat(32), deviceKeyHash: "device" };
  const gateways: GatewayDirectory = { forShop: (_shop, env) => (env === "sandbox" ? access : null), retiredFor: () => null, currencies: async () => null };
  const deps = { db: opened.db, sql: opened.sql, clock: { now: () => new Date(now) }, logger: createLogger({ level: "debug", sink: () => {} }), gateways } as unknown as PaymentsDeps;
  await reconcileOnce(deps, { worker: "unread", force: true });
  expect(await opened.db.payment.findUniqueOrThrow({ where: { id: old.id } })).toMatchObject({ state: "paid", attention: "webhook_mismatch", attentionDetail: NEVER_READ, unverifiedSince: null });
});

it("a payment settled by a signed webhook 7 days ago on credentials that no longer open is flagged once, and no longer waits", async () => {
  const now = Date.now();
  const old = await paidUnverifiedSince(now, 7 * 86_400_000 + 60_000);
  // No gateway to read with: the shop's credentials cannot be opened.
  const gateways: GatewayDirectory = { forShop: () => null, retiredFor: () => null, currencies: async () => null };
  const deps = { db: opened.db, sql: opened.sql, clock: { now: () => new Date(now) }, logger: createLogger({ level: "debug", sink: () => {} }), gateways } as unknown as PaymentsDeps;
  const summary = await reconcileOnce(deps, { worker: "unread", force: true });
  const after = await opened.db.payment.findUniqueOrThrow({ where: { id: old.id }, include: { events: true } });
  expect(after).toMatchObject({ attention: "webhook_mismatch", attentionDetail: NEVER_READ, unverifiedSince: null });
  expect(after.events.filter((e) => e.type === "attention")).toHaveLength(1);
  expect(summary.verified).toBe(1);
  await opened.db.payment.delete({ where: { id: old.id } });
});

it("a shopper's return whose read of the shop's orders meets one unreadable flags its payment as the reconciler's listing would, and stands in for that listing", async () => {
  const now = Date.now();
  const odd = await paidUnverified(now);
  // The returning shopper's payment, whose order the same listing shows paid.
  const returning = await opened.db.payment.create({
    data: paymentColumns(opened.shopId, { state: "awaiting_payment", gatewayOrderId: randomUUID(), gatewayStatus: "PE", createdAt: new Date(now - 30 * 60_000) }),
  });
  const deps = depsAnswering([listedOrder(odd.gatewayOrderId!, { fiat_amount: "not a number" }), listedOrder(returning.gatewayOrderId!)]);
  const shop = await opened.db.shop.findUniqueOrThrow({ where: { id: opened.shopId } });
  const listing = await readShopOrdersAtReturn(deps(now), shop, "sandbox", returning.gatewayOrderId!, SHOPPER_WAITING_READ);
  expect(listing).toMatchObject({ recorded: { state: "paid", gatewayStatus: "CO" } });
  await expectFlaggedOnce(odd.id);

  // The reconciler's next pass, within the hour, has nothing left to read.
  const calls = server.requests.length;
  await reconcileOnce(deps(now + 60_000), { worker: "unreadable" });
  expect(server.requests.length).toBe(calls);
});
