// Two app instances on one database reconcile at once, every webhook lost;
// one shop has a hundred and fifty open payments, another a few. Each device's orders are listed
// once (no shop reconciled twice, no look-ups), within the shared quota, and every payment ends
// as its order did. Real stack: the gateway sandbox over HTTP, SQLite.
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { reconcileOnce } from "../../app/payments/reconcile";
import { createServices } from "../../app/services.server";
import { connectSandbox } from "../../app/shops/onboarding.server";
import { paymentColumns } from "../support/payment-rows";
import { shopSandboxClient } from "../support/shop-gateway";
import { movingClock, setWebhookFaults, stackForFile } from "../support/stack";

const time = movingClock(() => stack());
const stack = stackForFile({ workers: false, clock: time.clock });
const db = () => stack().services.db;
const act = (orderId: string, body: Record<string, string>) => stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, body);

async function openPayments(shopDomain: string, count: number, paidEvery: number) {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain } });
  const { client: gateway, deviceHash } = await shopSandboxClient(stack(), shopDomain, time.clock);
  const made: { id: string; paid: boolean }[] = [];
  for (let i = 0; i < count; i++) {
    const order = await gateway.createOrder({ expected_output_amount: "49.90", input_currency: "BTC", fiat: "EUR", reference: randomUUID() });
    if (order.isErr()) throw order.error;
    const paid = i % paidEvery === 0;
    if (paid) {
      await act(order.value.identifier, { action: "pay", amount: "exact" });
      await act(order.value.identifier, { action: "confirm" });
    }
    const row = await db().payment.create({ data: paymentColumns(shop.id, { gatewayOrderId: order.value.identifier, gatewayStatus: "PE", createdAt: time.clock.now() }) });
    made.push({ id: row.id, paid });
  }
  return { hash: deviceHash, made };
}

it("two instances reconcile a shop with a hundred and fifty open payments and another shop at once: each device listed once, every payment settled", async () => {
  await setWebhookFaults(stack(), "drop");
  const other = await connectSandbox(stack().services, "second-shop.myshopify.com");
  expect(other.ok).toBe(true);
  const busy = await openPayments(stack().shopDomain, 150, 3);
  const small = await openPayments("second-shop.myshopify.com", 3, 2);
  await time.advance(16 * 60_000);

  const instance = () => createServices(stack().env, { db: stack().services.db, sql: stack().services.sql, clock: time.clock, logger: stack().logger });
  const before = async (hash: string) => db().gatewayCall.count({ where: { deviceHash: hash } });
  const [busyBefore, smallBefore] = [await before(busy.hash), await before(small.hash)];
  const [a, b] = await Promise.all([reconcileOnce(instance(), { worker: "a" }), reconcileOnce(instance(), { worker: "b" })]);
  expect(a.shops + b.shops).toBe(2);
  expect(await before(busy.hash)).toBe(busyBefore + 1);
  expect(await before(small.hash)).toBe(smallBefore + 1);
  for (const { made } of [busy, small]) {
    const rows = await db().payment.findMany({ where: { id: { in: made.map((m) => m.id) } } });
    for (const row of rows) expect(row.state).toBe(made.find((m) => m.id === row.id)!.paid ? "paid" : "awaiting_payment");
  }
  // An hour on, nothing new: the shop's open payments are listed again, once.
  await time.advance(60 * 60_000);
  await Promise.all([reconcileOnce(instance(), { worker: "a" }), reconcileOnce(instance(), { worker: "b" })]);
  expect(await before(busy.hash)).toBe(busyBefore + 2);
  const open = await db().payment.count({ where: { id: { in: busy.made.map((m) => m.id) }, state: { in: ["awaiting_payment", "confirming"] } } });
  // Their orders expired at the gateway (15-60 min): each is now rejected, read, not flagged.
  expect(open).toBe(0);
  expect(await db().payment.count({ where: { id: { in: busy.made.map((m) => m.id) }, attention: { not: null } } })).toBe(0);
}, 300_000);
