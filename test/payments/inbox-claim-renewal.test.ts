// Two instances: a webhook pass whose gateway read is slow (retries, the device's quota) keeps
// its claim on the webhooks it works, renewed while it works them, so another instance's pass
// meanwhile does not take them and read the same orders again. Before, the claim was renewed
// only before each shop's group, and lapsed 30 s into a slow read. On SQLite and PostgreSQL.
import { randomUUID } from "node:crypto";
import { ok } from "neverthrow";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { GatewayClient } from "../../app/gateway/client";
import { silentLogger } from "../../app/lib/logger.server";
import type { GatewayDirectory, PaymentsDeps, ShopGatewayAccess } from "../../app/payments/deps";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import { documentedOrder } from "../gateway/support/fixtures";
import { paymentColumns } from "../support/payment-rows";
import { ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: "inbox-claim-renewal.myshopify.com", webhookToken: "inbox-claim-renewal-token-0001" });
  let opened: OpenedRows;
  beforeAll(() => void (opened = rows()));
  afterEach(() => void vi.useRealTimers());

  it("a pass slowed by its gateway read keeps its claim: another instance's pass does not read the same orders meanwhile", async () => {
    let nowMs = Date.now();
    const clock = { now: () => new Date(nowMs) };
    const payment = await opened.db.payment.create({ data: paymentColumns(opened.shopId, { gatewayOrderId: randomUUID(), gatewayStatus: "PE", createdAt: new Date(nowMs - 600_000) }) });
    // A notification with no body the app can take at its word: its order is read.
    await opened.db.gatewayWebhook.create({
      data: { shopId: opened.shopId, gatewayEnv: "sandbox", nonce: "1", signature: randomUUID(), rawBody: "{}", orderId: payment.gatewayOrderId, status: "CO", receivedAt: clock.now(), nextAttemptAt: clock.now() },
    });
    const order = documentedOrder(payment.gatewayOrderId!, "CO", 1, new Date(nowMs - 60_000).toISOString(), payment);

    const reads: string[] = [];
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    let reading!: () => void;
    const readStarted = new Promise<void>((resolve) => (reading = resolve));
    function instance(name: string): PaymentsDeps {
      const read = async () => {
        reads.push(name);
        reading();
        await answered;
        return ok({ orders: [order], unreadable: [] });
      };
      const client = { listOrders: read, orderInfo: async () => (await read(), ok(order)), quotaRemaining: async () => ({ general: { minute: 60, day: 2000 }, critical: { minute: 15, day: 200 } }) } as unknown as GatewayClient;
      const access: ShopGatewayAccess = { env: "sandbox", client, secretKeyHex: "00".repeat(32), deviceKeyHash: "device-sandbox" };
      const gateways: GatewayDirectory = { forShop: (_shop, env) => (env === "sandbox" ? access : null), retiredFor: () => null, currencies: async () => null };
      return { db: opened.db, sql: opened.sql, clock, logger: silentLogger, gateways } as unknown as PaymentsDeps;
    }

    // Instance A's pass claims the notification and reads its order, slowly. Its renewals are
    // timers: faked, so the test says when they are due.
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const first = processWebhookInbox(instance("A"), { worker: "instance-a" });
    await readStarted;
    // 25 s into the read the renewal is due (every 10 s), and written.
    nowMs += 25_000;
    vi.advanceTimersByTime(10_000);
    await vi.waitFor(async () => {
      const row = await opened.db.gatewayWebhook.findFirstOrThrow({ where: { orderId: payment.gatewayOrderId } });
      expect(row.lockedUntil!.getTime()).toBe(nowMs + 30_000);
    });
    // 35 s into the read, past the first claim's term: instance B's pass.
    nowMs += 10_000;
    const second = await processWebhookInbox(instance("B"), { worker: "instance-b" });
    answer();
    const done = await first;

    expect(reads, "the order was read by both instances").toEqual(["A"]);
    expect(second).toEqual({ processed: 0, retried: 0, duplicates: 0 });
    expect(done.processed).toBe(1);
    expect((await opened.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).state).toBe("paid");
  });
});
