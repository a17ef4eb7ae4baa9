// The reconciler when one order of a shop's listing cannot be recorded (a write the database
// refuses, a row that keeps changing): that payment is logged and counted as unread, and the
// shop's other payments in the same listing, and its other environment, are settled all the
// same. Once its time is up, the unrecorded payment is finalised as unread ones are, so Shopify
// is told before its pending window closes. On SQLite and PostgreSQL.
import { randomUUID } from "node:crypto";
import { ok } from "neverthrow";
import { beforeAll, describe, expect, it } from "vitest";
import type { GatewayClient } from "../../app/gateway/client";
import { createLogger } from "../../app/lib/logger.server";
import type { GatewayDirectory, PaymentsDeps, ShopGatewayAccess } from "../../app/payments/deps";
import { FINALISE_UNREAD_AFTER_MS, reconcileOnce } from "../../app/payments/reconcile";
import { documentedOrder } from "../gateway/support/fixtures";
import { paymentColumns } from "../support/payment-rows";
import { ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: "one-failing-order.myshopify.com", webhookToken: "one-failing-order-token-0001" });
  let opened: OpenedRows;
  beforeAll(() => void (opened = rows()));

  /** The app's database, but reading one payment's row for its settlement fails, as a refused write would. */
  function failingFor(paymentId: string): PaymentsDeps["db"] {
    const payment = new Proxy(opened.db.payment, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (name !== "findUnique" || typeof value !== "function") return typeof value === "function" ? value.bind(target) : value;
        return (args: { where: { id?: string } }) =>
          args.where.id === paymentId ? Promise.reject(new Error("value out of range for the column")) : (value as (a: unknown) => Promise<unknown>).call(target, args);
      },
    });
    return new Proxy(opened.db, { get: (target, name) => (name === "payment" ? payment : (Reflect.get(target, name) as unknown)) }) as PaymentsDeps["db"];
  }

  it("one order that cannot be recorded holds back neither the shop's other payments nor its other environment, and is finalised unread in time", async () => {
    let offsetMs = 0;
    const clock = { now: () => new Date(Date.now() + offsetMs) };
    const createdAt = new Date(clock.now().getTime() - 2 * 3_600_000);
    const make = (env: "live" | "sandbox", i: number) =>
      opened.db.payment.create({ data: paymentColumns(opened.shopId, { gatewayEnv: env, gatewayOrderId: randomUUID(), gatewayStatus: "PE", createdAt: new Date(createdAt.getTime() + i) }) });
    const sandbox = [await make("sandbox", 0), await make("sandbox", 1), await make("sandbox", 2)];
    const live = [await make("live", 3)];
    const failing = sandbox[0]!;
    const access = (env: "live" | "sandbox", payments: { gatewayOrderId: string | null }[]): ShopGatewayAccess => {
      const orders = payments.map((p) => documentedOrder(p.gatewayOrderId!, "CO", 1, new Date(createdAt.getTime() + 600_000).toISOString()));
      const client = {
        listOrders: async () => ok({ orders, unreadable: [] }),
        orderInfo: async (id: string) => ok(orders.find((o) => o.identifier === id)!),
        quotaRemaining: async () => ({ general: { minute: 60, day: 2000 }, critical: { minute: 15, day: 200 } }),
      } as unknown as GatewayClient;
      return { env, client, secretKeyHex: "00".repeat(32) };
    };
    // The live environment is listed first: its payment's order is the one that fails.
    const byEnv = { live: access("live", [failing, ...live]), sandbox: access("sandbox", sandbox) };
    const gateways: GatewayDirectory = { forShop: (_shop, env) => byEnv[env], retiredFor: () => null, currencies: async () => null };
    const lines: string[] = [];
    const deps = { db: failingFor(failing.id), sql: opened.sql, clock, logger: createLogger({ level: "debug", sink: (l) => lines.push(l) }), gateways } as unknown as PaymentsDeps;
    await opened.db.payment.update({ where: { id: failing.id }, data: { gatewayEnv: "live" } });

    await reconcileOnce(deps, { worker: "a" });
    const state = async (id: string) => (await opened.db.payment.findUniqueOrThrow({ where: { id } })).state;
    expect(await Promise.all([...sandbox.slice(1), ...live].map((p) => state(p.id)))).toEqual(["paid", "paid", "paid"]);
    expect(await state(failing.id)).toBe("awaiting_payment");
    expect(lines.filter((l) => l.includes("could not be recorded"))).toHaveLength(1);

    // Past the point where an unread payment is finalised: it is rejected and flagged, so Shopify is told in time.
    offsetMs = FINALISE_UNREAD_AFTER_MS;
    await reconcileOnce(deps, { worker: "a", force: true });
    const finalised = await opened.db.payment.findUniqueOrThrow({ where: { id: failing.id } });
    expect(finalised).toMatchObject({ state: "failed", attention: "pending_window_expired" });
    expect(finalised.attentionDetail).toMatch(/^The gateway's order showed status CO, but the app could not record what it read \(its log says why\)/);
    expect(await opened.db.outboxMessage.count({ where: { paymentId: failing.id, kind: "payment.reject" } })).toBe(1);
  });
});
