// The reconciler when one order of a shop's listing cannot be recorded (a write the database
// refuses, a row that keeps changing): that payment is logged and counted as unread, and the
// shop's other payments in the same listing, and its other environment, are settled all the
// same. Once its time is up, the unrecorded payment is finalised as unread ones are, so Shopify
// is told before its pending window closes. The same when the write that fails is the one that
// finalises a payment, ends an abandoned session or flags a payment whose order is gone: the
// others in the pass are written, and the one that failed is left as it was for the next pass.
// On SQLite and PostgreSQL.
import { randomUUID } from "node:crypto";
import { err, ok } from "neverthrow";
import { beforeAll, describe, expect, it } from "vitest";
import type { GatewayClient } from "../../app/gateway/client";
import { createLogger } from "../../app/lib/logger.server";
import type { GatewayDirectory, PaymentsDeps, ShopGatewayAccess } from "../../app/payments/deps";
import { FINALISE_AFTER_MS, FINALISE_UNREAD_AFTER_MS, reconcileOnce } from "../../app/payments/reconcile";
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
    const access = (env: "live" | "sandbox", payments: { gatewayOrderId: string | null; amount: string; currency: string }[]): ShopGatewayAccess => {
      const orders = payments.map((p) => documentedOrder(p.gatewayOrderId!, "CO", 1, new Date(createdAt.getTime() + 600_000).toISOString(), p));
      const client = {
        listOrders: async () => ok({ orders, unreadable: [] }),
        orderInfo: async (id: string) => ok(orders.find((o) => o.identifier === id)!),
        quotaRemaining: async () => ({ general: { minute: 60, day: 2000 }, critical: { minute: 15, day: 200 } }),
      } as unknown as GatewayClient;
      return { env, client, secretKeyHex: "00".repeat(32), deviceKeyHash: `device-${env}` };
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
  /** The app's database, but every write to the given payments' rows fails, inside a transaction or not, as a refused write would. */
  function refusingWritesTo(paymentIds: readonly string[]): PaymentsDeps["db"] {
    const refused = (args: { where?: { id?: string } }) => args.where?.id !== undefined && paymentIds.includes(args.where.id);
    const guarded = <T extends object>(payment: T): T =>
      new Proxy(payment, {
        get(target, name, receiver) {
          const value = Reflect.get(target, name, receiver) as unknown;
          if (typeof value !== "function") return value;
          if (name !== "update" && name !== "updateMany") return value.bind(target);
          return (args: { where?: { id?: string } }) =>
            refused(args) ? Promise.reject(new Error("could not obtain lock on row")) : (value as (a: unknown) => Promise<unknown>).call(target, args);
        },
      });
    const withPayment = <T extends object>(client: T): T =>
      new Proxy(client, { get: (target, name) => (name === "payment" ? guarded(Reflect.get(target, "payment") as object) : (Reflect.get(target, name) as unknown)) });
    return new Proxy(opened.db, {
      get(target, name) {
        if (name === "payment") return guarded(target.payment);
        if (name !== "$transaction") return Reflect.get(target, name) as unknown;
        return (run: (tx: unknown) => Promise<unknown>, options?: unknown) =>
          (target.$transaction as (r: (tx: object) => Promise<unknown>, o?: unknown) => Promise<unknown>)((tx) => run(withPayment(tx)), options);
      },
    }) as PaymentsDeps["db"];
  }

  it("a payment whose finalising, ending or flagging cannot be written holds back none of the shop's others, and is written by a later pass", async () => {
    const now = Date.now();
    const clock = { now: () => new Date(now) };
    const closingAt = new Date(now - FINALISE_AFTER_MS - 60_000);
    const make = (env: "live" | "sandbox", columns: Parameters<typeof paymentColumns>[1]) =>
      opened.db.payment.create({ data: paymentColumns(opened.shopId, { gatewayEnv: env, createdAt: closingAt, ...columns }) });
    // Closing: still pending at the gateway at the end of Shopify's window, so each is finalised.
    const closing = [
      await make("sandbox", { gatewayOrderId: randomUUID(), gatewayStatus: "PE" }),
      await make("sandbox", { gatewayOrderId: randomUUID(), gatewayStatus: "PE" }),
      await make("live", { gatewayOrderId: randomUUID(), gatewayStatus: "PE" }),
    ];
    // Sessions that never got an answer: each is ended.
    const abandoned = [await make("sandbox", { state: "started" }), await make("sandbox", { state: "started" })];
    // Settled by a signed webhook, and the gateway no longer has their orders: each is flagged.
    const unverified = [
      await make("sandbox", { state: "paid", gatewayOrderId: randomUUID(), gatewayStatus: "CO", unverifiedSince: new Date(now - 7_200_000), createdAt: new Date(now - 7_200_000) }),
      await make("sandbox", { state: "paid", gatewayOrderId: randomUUID(), gatewayStatus: "CO", unverifiedSince: new Date(now - 7_200_000), createdAt: new Date(now - 7_200_000) }),
    ];
    const failing = [closing[0]!, abandoned[0]!, unverified[0]!];
    const goneOrders = new Set(unverified.map((p) => p.gatewayOrderId!));
    const access = (env: "live" | "sandbox"): ShopGatewayAccess => {
      const orders = closing.filter((p) => p.gatewayEnv === env).map((p) => documentedOrder(p.gatewayOrderId!, "PE", 1, closingAt.toISOString(), p));
      const client = {
        listOrders: async () => ok({ orders, unreadable: [] }),
        orderInfo: async (id: string) =>
          goneOrders.has(id) ? err({ kind: "not_found", message: "Not found." }) : ok(orders.find((o) => o.identifier === id)!),
        quotaRemaining: async () => ({ general: { minute: 60, day: 2000 }, critical: { minute: 15, day: 200 } }),
      } as unknown as GatewayClient;
      return { env, client, secretKeyHex: "00".repeat(32), deviceKeyHash: `device-${env}` };
    };
    const byEnv = { live: access("live"), sandbox: access("sandbox") };
    const gateways: GatewayDirectory = { forShop: (_shop, env) => byEnv[env], retiredFor: () => null, currencies: async () => null };
    const lines: string[] = [];
    const logger = createLogger({ level: "debug", sink: (l) => lines.push(l) });
    const row = (id: string) => opened.db.payment.findUniqueOrThrow({ where: { id } });

    await reconcileOnce({ db: refusingWritesTo(failing.map((p) => p.id)), sql: opened.sql, clock, logger, gateways } as unknown as PaymentsDeps, { worker: "a", force: true });
    expect(await Promise.all(closing.slice(1).map(async (p) => (await row(p.id)).state))).toEqual(["failed", "failed"]);
    expect((await row(abandoned[1]!.id)).state).toBe("not_started");
    expect(await row(unverified[1]!.id)).toMatchObject({ attention: "webhook_mismatch", unverifiedSince: null });
    // The ones whose writes failed are as they were, each logged once with its payment.
    expect(await row(closing[0]!.id)).toMatchObject({ state: "awaiting_payment", attention: null });
    expect((await row(abandoned[0]!.id)).state).toBe("started");
    expect(await row(unverified[0]!.id)).toMatchObject({ attention: null, unverifiedSince: unverified[0]!.unverifiedSince });
    for (const payment of failing) expect(lines.filter((l) => l.includes(payment.id))).toHaveLength(1);
    expect(await opened.db.outboxMessage.count({ where: { paymentId: closing[0]!.id } })).toBe(0);

    // The next pass, with the database taking writes again, writes them.
    await reconcileOnce({ db: opened.db, sql: opened.sql, clock, logger, gateways } as unknown as PaymentsDeps, { worker: "a", force: true });
    expect(await row(closing[0]!.id)).toMatchObject({ state: "failed", attention: "pending_window_expired" });
    expect((await row(abandoned[0]!.id)).state).toBe("not_started");
    expect(await row(unverified[0]!.id)).toMatchObject({ attention: "webhook_mismatch", unverifiedSince: null });
    expect(await opened.db.outboxMessage.count({ where: { paymentId: closing[0]!.id, kind: "payment.reject" } })).toBe(1);
  });
});
