// Two instances' webhook inbox passes on one PostgreSQL database. A pass finds the due webhooks
// with one statement and claims them with a second. When the other instance's pass claims a
// webhook in between, fails to read its order (the gateway throttled the device: 429) and puts
// it back to wait out its backoff, the first pass's claim must not take it: the claim checks
// that it is still due, so no call of the device's quota is spent on a gateway that has just
// asked the app to slow down.
import { err } from "neverthrow";
import { beforeAll, describe, expect, it } from "vitest";
import { GatewayThrottledError } from "../../app/gateway/errors";
import { silentLogger } from "../../app/lib/logger.server";
import type { Database } from "../../app/db/database.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

const SHOP = "inbox-claim-still-due.myshopify.com";

describe.each(ROW_DATABASES.filter((database) => database.name === "PostgreSQL"))("on $name, two instances", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: "inbox-claim-still-due-webhook-01" });
  let opened: OpenedRows;
  beforeAll(() => void (opened = rows()));

  const at = new Date();
  const clock = { now: () => at };
  /** Every gateway read made. */
  const reads: string[] = [];
  const throttled = async (what: string) => {
    reads.push(what);
    return err(new GatewayThrottledError(60));
  };

  function instance(db: Database): PaymentsDeps {
    const client = { orderInfo: (id: string) => throttled(`info ${id}`), listOrders: () => throttled("list"), quotaRemaining: async () => ({ general: { minute: 60, day: 2000 }, critical: { minute: 15, day: 200 } }) };
    return {
      db,
      sql: opened.sql,
      clock,
      logger: silentLogger,
      gateways: { forShop: (_shop: unknown, env: string) => ({ env, client, secretKeyHex: "00" }), retiredFor: () => null },
    } as unknown as PaymentsDeps;
  }

  it("a webhook another instance just put back to wait out its backoff (the gateway throttled its read) is not read again at once", async () => {
    const orderId = "5b5c0a4e-6b1a-4c8e-9c55-3f1e2a7d9b01";
    const payment = await createPayment(opened, { gatewayOrderId: orderId });
    // A final status without the order's amount is only a trigger: the order must be read.
    const rawBody = `{"identifier": "${orderId}", "status": "CO"}`;
    const hook = await opened.db.gatewayWebhook.create({
      data: { shopId: payment.shopId, gatewayEnv: "sandbox", nonce: "1", signature: "sig-inbox-claim-1", rawBody, orderId, status: "CO", receivedAt: at, nextAttemptAt: at },
    });

    // Instance B: its pass has found the due webhooks and is about to claim them.
    let found!: () => void;
    const foundDue = new Promise<void>((resolve) => (found = resolve));
    let goOn!: () => void;
    const mayClaim = new Promise<void>((resolve) => (goOn = resolve));
    const webhooks = opened.db.gatewayWebhook;
    const slowWebhooks = new Proxy(webhooks, {
      get(target, property, receiver) {
        if (property !== "findMany") return Reflect.get(target, property, receiver);
        return async (...args: Parameters<typeof webhooks.findMany>) => {
          const result = await webhooks.findMany(...args);
          found();
          await mayClaim;
          return result;
        };
      },
    });
    const slowDb = new Proxy(opened.db, { get: (target, property, receiver) => (property === "gatewayWebhook" ? slowWebhooks : Reflect.get(target, property, receiver)) });
    const passB = processWebhookInbox(instance(slowDb as Database), { worker: "instance-b" });
    await foundDue;

    // Instance A claims it; the gateway refuses the read (429): the webhook waits out its backoff.
    const passA = await processWebhookInbox(instance(opened.db), { worker: "instance-a" });
    expect(passA.retried).toBe(1);
    const waiting = await opened.db.gatewayWebhook.findUniqueOrThrow({ where: { id: hook.id } });
    expect(waiting).toMatchObject({ processedAt: null, lockedBy: null, attempts: 1 });
    expect(waiting.nextAttemptAt.getTime()).toBeGreaterThan(at.getTime());
    expect(reads).toHaveLength(1);

    // Instance B goes on: the webhook is not due, so it must not be claimed nor its order read.
    goOn();
    const b = await passB;
    expect(reads, "the throttled gateway was read again before the webhook's backoff ended").toHaveLength(1);
    expect(b.retried).toBe(0);
    expect((await opened.db.gatewayWebhook.findUniqueOrThrow({ where: { id: hook.id } })).attempts).toBe(1);
  });
});
