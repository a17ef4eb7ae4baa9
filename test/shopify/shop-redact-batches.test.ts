// shop/redact deletes a large shop's records a batch at a time, each batch in a transaction of
// its own, before the shop's row goes: all of years of payments in the one transaction outlasted
// its time limit, on every retry alike. The batches stop as soon as the shop is no longer to be
// deleted (installed again), and never touch another shop's records or records made after the
// redaction began.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../app/db/database.server";
import { createLogger } from "../../app/lib/logger.server";
import { deleteShopRecordsInBatches, redactShop } from "../../app/shops/shopify-webhooks.server";
import { paymentColumns } from "../support/payment-rows";
import { ROW_DATABASES, rowsDatabaseForFile } from "../support/row-databases";
import { startUninstalledShopify, type UninstalledShopify } from "../support/uninstalled-shopify";

const logger = createLogger({ level: "silent" });
let uninstalled: UninstalledShopify;
beforeAll(async () => void (uninstalled = await startUninstalledShopify()));
afterAll(() => uninstalled?.close());

const BEFORE = new Date("2026-11-20T00:00:00.000Z");
const AFTER = new Date("2026-11-21T00:00:00.000Z");
const BATCH = 7;

/** The client, counting the transactions it runs. */
function countingTransactions(db: Database): { db: Database; transactions: () => number } {
  let count = 0;
  const counting = new Proxy(db, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name);
      if (typeof value !== "function") return value;
      if (name !== "$transaction") return value.bind(target);
      return (...args: unknown[]) => {
        count++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { db: counting, transactions: () => count };
}

describe.each(ROW_DATABASES)("on $name", (database) => {
  let db: Database;
  let serial = 0;
  const rows = rowsDatabaseForFile(database, { shopDomain: "redact-batches.myshopify.com", webhookToken: "redact-batches-token-0001" });
  beforeAll(() => void ({ db } = rows()));

  /** An uninstalled shop with `payments` payments (each with 2 events and a transaction) and `others` of each other kind, all made at `at`. */
  async function shopWithRecords(payments: number, others: number, at = BEFORE): Promise<{ shopDomain: string; shopId: string }> {
    const shopDomain = `redact-batches-${++serial}.myshopify.com`;
    const shopId = (await db.shop.create({ data: { shopDomain, webhookToken: randomBytes(16).toString("hex"), uninstalledAt: at }, select: { id: true } })).id;
    await addRecords(shopId, shopDomain, payments, others, at);
    return { shopDomain, shopId };
  }

  async function addRecords(shopId: string, shopDomain: string, payments: number, others: number, at: Date): Promise<void> {
    const tag = randomBytes(6).toString("hex");
    for (let i = 0; i < payments; i++) {
      const payment = await db.payment.create({ data: paymentColumns(shopId, { shopifyPaymentId: `p-${tag}-${i}`, createdAt: at }) });
      await db.paymentEvent.createMany({ data: [{ paymentId: payment.id, type: "a" }, { paymentId: payment.id, type: "b" }] });
      await db.paymentTransaction.create({ data: { paymentId: payment.id, txHash: `0x${tag}${i}`, currency: "ETH", amount: "0.01", confirmed: true, seenAt: at } });
    }
    for (let i = 0; i < others; i++) {
      await db.sessionRequest.create({ data: { shopId, kind: "refund", shopifyId: `r-${tag}-${i}`, gid: "gid", paymentShopifyId: "p", amount: "1.00", currency: "EUR", status: "pending", createdAt: at } });
      await db.gatewayWebhook.create({ data: { shopId, gatewayEnv: "sandbox", nonce: `n-${tag}-${i}`, signature: `s-${tag}-${i}`, rawBody: "{}", receivedAt: at } });
      await db.rejectedWebhook.create({ data: { shopId, reason: "bad_signature", at } });
      await db.outboxMessage.create({ data: { shopDomain, kind: "payment.resolve", dedupeKey: `k-${tag}-${i}`, payload: "{}", createdAt: at } });
    }
  }

  const held = async (shopId: string, shopDomain: string) => ({
    payments: await db.payment.count({ where: { shopId } }),
    events: await db.paymentEvent.count({ where: { payment: { shopId } } }),
    transactions: await db.paymentTransaction.count({ where: { payment: { shopId } } }),
    requests: await db.sessionRequest.count({ where: { shopId } }),
    webhooks: await db.gatewayWebhook.count({ where: { shopId } }),
    rejected: await db.rejectedWebhook.count({ where: { shopId } }),
    outbox: await db.outboxMessage.count({ where: { shopDomain } }),
  });
  const none = { payments: 0, events: 0, transactions: 0, requests: 0, webhooks: 0, rejected: 0, outbox: 0 };

  it("deletes each kind of a shop's records a batch at a time, each in its own transaction, and leaves the shop's row and other shops' records", async () => {
    const shop = await shopWithRecords(20, 10);
    const other = await shopWithRecords(3, 2);
    const counting = countingTransactions(db);
    await deleteShopRecordsInBatches(counting.db, { shopDomain: shop.shopDomain }, AFTER, BATCH);
    expect(await held(shop.shopId, shop.shopDomain)).toEqual(none);
    expect(await db.shop.count({ where: { id: shop.shopId } })).toBe(1);
    // Payments: 7 + 7 + 6; each other kind 7 + 3.
    expect(counting.transactions()).toBe(3 + 4 * 2);
    expect(await held(other.shopId, other.shopDomain)).toEqual({ payments: 3, events: 6, transactions: 3, requests: 2, webhooks: 2, rejected: 2, outbox: 2 });
  });

  it("leaves what was recorded after the redaction began, and stops as soon as the shop is no longer to be deleted", async () => {
    const shop = await shopWithRecords(4, 2);
    await addRecords(shop.shopId, shop.shopDomain, 2, 1, new Date(AFTER.getTime() + 1));
    await deleteShopRecordsInBatches(db, { shopDomain: shop.shopDomain }, AFTER, BATCH);
    expect(await held(shop.shopId, shop.shopDomain)).toEqual({ payments: 2, events: 4, transactions: 2, requests: 1, webhooks: 1, rejected: 1, outbox: 1 });

    // Installed again: the condition the redaction deletes under no longer holds, and nothing goes.
    const reinstalled = await shopWithRecords(9, 3);
    await db.shop.update({ where: { id: reinstalled.shopId }, data: { uninstalledAt: null } });
    await deleteShopRecordsInBatches(db, { shopDomain: reinstalled.shopDomain, uninstalledAt: { not: null } }, AFTER, BATCH);
    expect(await held(reinstalled.shopId, reinstalled.shopDomain)).toEqual({ payments: 9, events: 18, transactions: 9, requests: 3, webhooks: 3, rejected: 3, outbox: 3 });
  });

  it("shop/redact of a shop with more records than a batch deletes them all with the shop", async () => {
    const shop = await shopWithRecords(600, 3);
    expect(await redactShop({ db, logger, shopify: uninstalled.directory, clock: { now: () => AFTER } }, shop.shopDomain)).toBe("carried_out");
    expect(await held(shop.shopId, shop.shopDomain)).toEqual(none);
    expect(await db.shop.count({ where: { shopDomain: shop.shopDomain } })).toBe(0);
  }, 120_000);
});
