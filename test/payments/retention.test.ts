// The retention purge, on SQLite and PostgreSQL: processed webhooks, refused webhooks and
// delivered Shopify calls go once their retention has run out; anything still at work (a
// webhook waiting or failing, a call pending), anything a person must see (a call Shopify
// refused, the health page's last notification and week of refusals) and anything a later
// enqueue depends on (an open payment's calls, a shop's newest readiness call) stays. A
// backlog goes in batches, instances purging together share it, a purged webhook's replay is
// still refused (stale), and the background workers run the purge with the configured retention.
import { randomBytes, randomUUID } from "node:crypto";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { shopHealth } from "../../app/admin/health.server";
import { describeEvent } from "../../app/admin/timeline";
import { parseEnv } from "../../app/config/env.server";
import type { Database } from "../../app/db/database.server";
import { parseGatewayJson } from "../../app/gateway/json-numbers";
import { gatewayOrderIdSchema, orderInfoResponseSchema } from "../../app/gateway/schemas";
import { parseGatewayStatus } from "../../app/gateway/statuses";
import { signWebhook } from "../../app/gateway/webhook-signature";
import { createLogger, silentLogger } from "../../app/lib/logger.server";
import { receiveGatewayWebhook } from "../../app/payments/gateway-webhooks";
import { finalMessageKey } from "../../app/payments/outbox";
import { enqueuePending } from "../../app/payments/pending";
import { LATE_PAYMENT_WATCH_MS } from "../../app/payments/payment-state";
import {
  CUSTOMER_DATA_ERASED,
  DEFAULT_CUSTOMER_DATA_RETENTION_DAYS,
  DEFAULT_RETENTION_DAYS,
  MIN_CUSTOMER_DATA_RETENTION_DAYS,
  MIN_RETENTION_DAYS,
  purgeExpiredRows,
  type PurgeOptions,
} from "../../app/payments/retention";
import { settleFromGatewayOrder } from "../../app/payments/settle-payment";
import { createServices, type AppServices } from "../../app/services.server";
import { NO_RETIRED_CREDENTIALS } from "../../app/shops/credential-columns";
import { retireCredentials, storeCredentials } from "../../app/shops/shop-credentials.server";
import { startWorkers } from "../../app/workers.server";
import type { Prisma } from "../../generated/prisma/sqlite/client";
import { fixtureText } from "../gateway/support/fixtures";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile } from "../support/row-databases";

const DAY_MS = 86_400_000;
const SHOP = "retention.myshopify.com";
const TOKEN = "retention-webhook-token-0001";
const SECRET = randomBytes(32).toString("hex");
/** The oldest nonce any configuration lets through the door (WEBHOOK_MAX_NONCE_AGE_SECONDS at its maximum). */
const LONGEST_NONCE_AGE_SECONDS = 3600;

/** A gateway read of a settled order, as the gateway answers it. */
const recordedOrder = orderInfoResponseSchema.parse((parseGatewayJson(fixtureText("orders-info.response.eth_test.2022-10.Naza2021.json")) as { body: unknown }).body);

// The app's clock, moved by the tests; whole seconds, as nonces are.
const START = new Date(Math.floor(Date.now() / 1000) * 1000);
const clock = { at: START, now: (): Date => clock.at };
const daysAgo = (days: number) => new Date(clock.at.getTime() - days * DAY_MS);

describe("configuration", () => {
  it("RETENTION_DAYS is 30 days unless set, and never under the minimum that keeps a week of refusals and every live nonce", () => {
    expect(parseEnv({}).RETENTION_DAYS).toBe(DEFAULT_RETENTION_DAYS);
    expect(DEFAULT_RETENTION_DAYS).toBe(30);
    expect(parseEnv({ RETENTION_DAYS: "90" }).RETENTION_DAYS).toBe(90);
    expect(parseEnv({ RETENTION_DAYS: String(MIN_RETENTION_DAYS), WEBHOOK_MAX_NONCE_AGE_SECONDS: String(LONGEST_NONCE_AGE_SECONDS) }).RETENTION_DAYS).toBe(MIN_RETENTION_DAYS);
    expect(() => parseEnv({ RETENTION_DAYS: String(MIN_RETENTION_DAYS - 1) })).toThrow(/RETENTION_DAYS: must be at least 7/);
    expect(() => parseEnv({ RETENTION_DAYS: "a month" })).toThrow(/RETENTION_DAYS/);
    // The health page counts the refusals of the last 7 days; no nonce older than an hour gets in.
    expect(MIN_RETENTION_DAYS).toBeGreaterThanOrEqual(7);
    expect(() => parseEnv({ WEBHOOK_MAX_NONCE_AGE_SECONDS: String(LONGEST_NONCE_AGE_SECONDS + 1) })).toThrow(/WEBHOOK_MAX_NONCE_AGE_SECONDS/);
  });

  it("CUSTOMER_DATA_RETENTION_DAYS is 90 days unless set, and never under the 30 days a data request must stay answerable", () => {
    expect(parseEnv({}).CUSTOMER_DATA_RETENTION_DAYS).toBe(90);
    expect(DEFAULT_CUSTOMER_DATA_RETENTION_DAYS).toBe(90);
    expect(parseEnv({ CUSTOMER_DATA_RETENTION_DAYS: "365" }).CUSTOMER_DATA_RETENTION_DAYS).toBe(365);
    expect(parseEnv({ CUSTOMER_DATA_RETENTION_DAYS: "30" }).CUSTOMER_DATA_RETENTION_DAYS).toBe(MIN_CUSTOMER_DATA_RETENTION_DAYS);
    expect(() => parseEnv({ CUSTOMER_DATA_RETENTION_DAYS: "29" })).toThrow(/CUSTOMER_DATA_RETENTION_DAYS: must be at least 30/);
    // A rejected payment is watched for late crypto for a week: its details outlive the watch.
    expect(MIN_CUSTOMER_DATA_RETENTION_DAYS * DAY_MS).toBeGreaterThan(LATE_PAYMENT_WATCH_MS);
  });
});

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: TOKEN });
  let db: Database;
  let shopId: string;
  let services: AppServices;
  let serial = 0;

  beforeAll(async () => {
    const opened = rows();
    ({ db, shopId } = opened);
    services = createServices(parseEnv({ NODE_ENV: "test" }), { db, sql: opened.sql, clock, logger: silentLogger });
    const shop = await db.shop.findUniqueOrThrow({ where: { id: shopId } });
    await storeCredentials(db, services.cipher, shop, "sandbox", { deviceKey: randomUUID(), secretKeyHex: SECRET });
  });

  beforeEach(async () => {
    clock.at = START;
    await db.gatewayWebhook.deleteMany({});
    await db.rejectedWebhook.deleteMany({});
    await db.outboxMessage.deleteMany({});
    await db.payment.deleteMany({});
    await db.customerDataRequest.deleteMany({});
    await db.shop.deleteMany({ where: { id: { not: shopId } } });
  });

  const purge = (options: Partial<PurgeOptions> = {}) => purgeExpiredRows(services, { retentionDays: DEFAULT_RETENTION_DAYS, customerDataDays: DEFAULT_CUSTOMER_DATA_RETENTION_DAYS, ...options });

  function webhook(shop: string, receivedAt: Date, processedAt: Date | null, columns: Partial<Prisma.GatewayWebhookUncheckedCreateInput> = {}) {
    serial++;
    return db.gatewayWebhook.create({
      data: { shopId: shop, gatewayEnv: "sandbox", nonce: String(Math.floor(receivedAt.getTime() / 1000)), signature: `signature-${serial}`, rawBody: "{}", receivedAt, processedAt, nextAttemptAt: receivedAt, ...columns },
    });
  }

  function message(columns: Partial<Prisma.OutboxMessageUncheckedCreateInput> & Pick<Prisma.OutboxMessageUncheckedCreateInput, "kind">) {
    serial++;
    return db.outboxMessage.create({
      data: { shopDomain: SHOP, dedupeKey: `${columns.kind}:${serial}`, payload: "{}", status: "done", createdAt: daysAgo(40), doneAt: daysAgo(40), ...columns },
    });
  }

  function dataRequest(receivedAt: Date, downloadedAt: Date | null = null) {
    serial++;
    return db.customerDataRequest.create({
      data: { shopId, webhookId: `webhook-${serial}`, customerEmail: "asked@example.com", report: "{}", paymentCount: 0, receivedAt, downloadedAt },
    });
  }

  const ids = (list: { id: string }[]) => list.map((row) => row.id).sort();
  const CUSTOMER = { customerEmail: "shopper@example.com", customerName: "Ada Lovelace", customerPhone: "+34611222333", billingAddress: '{"line1":"Calle Mayor 1"}' };
  const erasures = (paymentId: string) => db.paymentEvent.count({ where: { paymentId, type: CUSTOMER_DATA_ERASED } });

  it("old processed webhooks go; one processed lately, unprocessed, failing and recent ones stay", async () => {
    // A later notification: none of these is the shop's newest.
    const latest = await webhook(shopId, daysAgo(1), daysAgo(1));
    await webhook(shopId, daysAgo(40), daysAgo(40));
    await webhook(shopId, daysAgo(31), daysAgo(30.5), { lastError: "duplicate of a settled status" });
    const kept = [
      latest,
      // Received long ago but retried for days before it was processed.
      await webhook(shopId, daysAgo(40), daysAgo(2)),
      await webhook(shopId, daysAgo(40), null),
      await webhook(shopId, daysAgo(40), null, { attempts: 9, lastError: "gateway read failed: unavailable", nextAttemptAt: daysAgo(-1) }),
      await webhook(shopId, daysAgo(29), daysAgo(29)),
    ];

    expect(await purge()).toEqual({ retiredDevices: 0, gatewayWebhooks: 2, rejectedWebhooks: 0, outboxMessages: 0, customerRecords: 0, dataRequestReports: 0, dataRequestDeliveries: 0, more: false });
    expect(ids(await db.gatewayWebhook.findMany())).toEqual(ids(kept));
    // Nothing more is due: a second pass deletes nothing.
    expect(await purge()).toEqual({ retiredDevices: 0, gatewayWebhooks: 0, rejectedWebhooks: 0, outboxMessages: 0, customerRecords: 0, dataRequestReports: 0, dataRequestDeliveries: 0, more: false });
  });

  it("a shop's newest notification stays however old: the health page still says when the gateway last reached it", async () => {
    const quiet = await db.shop.create({ data: { shopDomain: "quiet.myshopify.com", webhookToken: "quiet-webhook-token-00001" } });
    await webhook(quiet.id, daysAgo(90), daysAgo(90));
    const newest = await webhook(quiet.id, daysAgo(60), daysAgo(60));
    const before = await shopHealth(services, quiet);
    expect(before.lastWebhookAt).not.toBeNull();

    expect(await purge()).toMatchObject({ gatewayWebhooks: 1 });
    expect(ids(await db.gatewayWebhook.findMany({ where: { shopId: quiet.id } }))).toEqual([newest.id]);
    expect((await shopHealth(services, quiet)).lastWebhookAt).toBe(before.lastWebhookAt);
  });

  it("refused webhooks go after the retention; the health page's week of refusals stays, even at the shortest retention", async () => {
    for (const days of [40, 31, 8, 6.9, 1]) await db.rejectedWebhook.create({ data: { shopId, reason: "bad_signature", at: daysAgo(days) } });
    await db.rejectedWebhook.create({ data: { shopId, reason: "stale_nonce", at: daysAgo(6) } });
    const shop = await db.shop.findUniqueOrThrow({ where: { id: shopId } });
    const before = (await shopHealth(services, shop)).rejected;
    expect(before.map((r) => [r.reason, r.count])).toEqual([
      ["bad_signature", 2],
      ["stale_nonce", 1],
    ]);

    expect(await purge()).toMatchObject({ rejectedWebhooks: 2 });
    expect(await purge({ retentionDays: MIN_RETENTION_DAYS })).toMatchObject({ rejectedWebhooks: 1 });
    expect((await shopHealth(services, shop)).rejected).toEqual(before);
    expect(await db.rejectedWebhook.count()).toBe(3);
  });

  it("delivered calls go once old and their payment final; pending, refused, open payments' and the newest readiness calls stay", async () => {
    const paid = await createPayment(rows(), { state: "paid" });
    const failed = await createPayment(rows(), { state: "failed" });
    const open = await createPayment(rows(), { state: "confirming" });
    await message({ kind: "payment.pending", paymentId: paid.id, dedupeKey: `payment:${paid.id}:pending` });
    await message({ kind: "payment.resolve", paymentId: paid.id, dedupeKey: finalMessageKey(paid.id) });
    await message({ kind: "payment.reject", paymentId: failed.id, dedupeKey: finalMessageKey(failed.id) });
    await message({ kind: "capture.resolve", paymentId: paid.id });
    await message({ kind: "refund.reject", paymentId: null });
    // A payment erased since (its shop's customer asked): nothing can enqueue its calls again.
    await message({ kind: "void.resolve", paymentId: "erased-payment" });
    await message({ kind: "app.configure", createdAt: daysAgo(50), doneAt: daysAgo(50) });
    const kept = [
      // A shopper returning to an open payment enqueues "pending" again under this key.
      await message({ kind: "payment.pending", paymentId: open.id, dedupeKey: `payment:${open.id}:pending` }),
      // Refused by Shopify: the health page lists it for a person.
      await message({ kind: "refund.reject", status: "failed", lastError: "Shopify said no", doneAt: daysAgo(40) }),
      // Still being retried after weeks of failures.
      await message({ kind: "capture.resolve", status: "pending", doneAt: null, attempts: 60, lastError: "throttled" }),
      // Delivered within the retention.
      await message({ kind: "void.reject", createdAt: daysAgo(31), doneAt: daysAgo(29) }),
      // The shop's newest readiness call: the next readiness check reads how it ended.
      await message({ kind: "app.configure", createdAt: daysAgo(45), doneAt: daysAgo(45) }),
    ];

    expect(await purge()).toEqual({ retiredDevices: 0, gatewayWebhooks: 0, rejectedWebhooks: 0, outboxMessages: 7, customerRecords: 0, dataRequestReports: 0, dataRequestDeliveries: 0, more: false });
    expect(ids(await db.outboxMessage.findMany())).toEqual(ids(kept));
  });

  it("a kept call still dedupes its key, and a purged payment's final call is never enqueued again", async () => {
    const open = await createPayment(rows(), { state: "awaiting_payment" });
    const orderId = gatewayOrderIdSchema.parse(randomUUID());
    const paid = await createPayment(rows(), { state: "paid", gatewayOrderId: orderId, gatewayStatus: "CO" });
    const pending = await message({ kind: "payment.pending", paymentId: open.id, dedupeKey: `payment:${open.id}:pending` });
    await message({ kind: "payment.resolve", paymentId: paid.id, dedupeKey: finalMessageKey(paid.id) });
    expect(await purge()).toMatchObject({ outboxMessages: 1 });

    // The shopper comes back to the open payment: Shopify is not asked for "pending" a second time.
    const again = await enqueuePending(services, { ...open, shop: { shopDomain: SHOP } }, "BUYER_ACTION_REQUIRED");
    expect(again).toMatchObject({ id: pending.id, status: "done" });
    expect(await db.outboxMessage.count({ where: { dedupeKey: `payment:${open.id}:pending` } })).toBe(1);

    // A late read of the paid payment's order, even one showing another final status, makes no new final call.
    const late = await settleFromGatewayOrder(services, paid.id, { ...recordedOrder, identifier: orderId, status: parseGatewayStatus("EX") }, "reconcile", clock.now());
    expect(late.finalMessage).toBeNull();
    expect(late.payment.state).toBe("paid");
    expect(await db.outboxMessage.count({ where: { paymentId: paid.id } })).toBe(0);
  });

  it("a backlog larger than a batch goes in batches, a bounded number per pass, until none is left", async () => {
    const backlog = 25;
    await webhook(shopId, daysAgo(1), daysAgo(1));
    for (let i = 0; i < backlog; i++) {
      await webhook(shopId, daysAgo(40), daysAgo(40));
      await db.rejectedWebhook.create({ data: { shopId, reason: "bad_signature", at: daysAgo(40) } });
      await message({ kind: "refund.reject" });
    }

    expect(await purge({ batchSize: 10, maxBatches: 2 })).toEqual({ retiredDevices: 0, gatewayWebhooks: 20, rejectedWebhooks: 20, outboxMessages: 20, customerRecords: 0, dataRequestReports: 0, dataRequestDeliveries: 0, more: true });
    expect(await purge({ batchSize: 10, maxBatches: 2 })).toEqual({ retiredDevices: 0, gatewayWebhooks: 5, rejectedWebhooks: 5, outboxMessages: 5, customerRecords: 0, dataRequestReports: 0, dataRequestDeliveries: 0, more: false });
    expect([await db.gatewayWebhook.count(), await db.rejectedWebhook.count(), await db.outboxMessage.count()]).toEqual([1, 0, 0]);
  });

  it("a purged webhook's replay is refused as stale: a purge never lets a replay in", async () => {
    const intake = (body: string, nonce: string) =>
      receiveGatewayWebhook(services, {
        token: TOKEN,
        rawBody: new TextEncoder().encode(body),
        nonce,
        signature: signWebhook({ secretHex: SECRET, nonce, rawBody: body }),
        maxNonceAgeSeconds: LONGEST_NONCE_AGE_SECONDS,
      });
    const notification = () => JSON.stringify({ identifier: randomUUID(), status: "CO", fiat_amount: 49.9, fiat_currency: "EUR" });
    // The sender's clock 5 seconds ahead: the newest nonce the door takes.
    const body = notification();
    const nonce = String(clock.now().getTime() / 1000 + 5);
    expect(await intake(body, nonce)).toMatchObject({ status: 200 });
    clock.at = new Date(START.getTime() + 1_000);
    expect(await intake(notification(), String(clock.now().getTime() / 1000))).toMatchObject({ status: 200 });
    await db.gatewayWebhook.updateMany({ data: { processedAt: clock.now() } });

    // While the nonce is fresh the row refuses the replay, and the purge keeps the row.
    clock.at = new Date(START.getTime() + (LONGEST_NONCE_AGE_SECONDS - 5) * 1000);
    expect(await purge({ retentionDays: MIN_RETENTION_DAYS })).toMatchObject({ gatewayWebhooks: 0 });
    expect(await intake(body, nonce)).toEqual({ status: 409, reason: "replayed" });

    // Once the retention has run out the row goes, and the same bytes are refused as stale.
    clock.at = new Date(START.getTime() + MIN_RETENTION_DAYS * DAY_MS + 3_600_000);
    expect(await purge({ retentionDays: MIN_RETENTION_DAYS })).toMatchObject({ gatewayWebhooks: 1 });
    expect(await db.gatewayWebhook.count({ where: { nonce } })).toBe(0);
    expect(await intake(body, nonce)).toEqual({ status: 401, reason: "stale_nonce" });
    expect(await db.gatewayWebhook.count()).toBe(1);
  });

  it("retired credentials stay while a payment on them is open, or rejected and still watched for late crypto, and go once none is", async () => {
    const retire = () =>
      db.shop.update({ where: { id: shopId }, data: { liveRetiredDeviceKeyEnc: "sealed-device-key", liveRetiredSecretKeyEnc: "sealed-secret-key", liveRetiredAt: clock.now() } });
    const retired = async () => (await db.shop.findUniqueOrThrow({ where: { id: shopId } })).liveRetiredDeviceKeyEnc !== null;
    await retire();
    // A payment paid and checked long ago needs nothing.
    await createPayment(rows(), { gatewayEnv: "live", state: "paid", gatewayOrderId: randomUUID(), createdAt: daysAgo(40) });
    // Rejected yesterday: its order is read for late crypto for a week after it began.
    const rejected = await createPayment(rows(), { gatewayEnv: "live", state: "failed", gatewayStatus: "EX", gatewayOrderId: randomUUID(), createdAt: daysAgo(1) });
    expect((await purge()).retiredDevices).toBe(0);
    expect(await retired()).toBe(true);

    clock.at = new Date(rejected.createdAt.getTime() + 7 * DAY_MS + 1);
    expect((await purge()).retiredDevices).toBe(1);
    expect(await retired()).toBe(false);

    // An open payment keeps them too, whatever its age.
    await retire();
    await createPayment(rows(), { gatewayEnv: "live", state: "awaiting_payment", gatewayOrderId: randomUUID(), createdAt: daysAgo(40) });
    expect((await purge()).retiredDevices).toBe(0);
    expect(await retired()).toBe(true);
    await db.shop.update({ where: { id: shopId }, data: NO_RETIRED_CREDENTIALS.live });
  });

  it("retired credentials go once no payment begun on them needs them: the payments made since, on the device in use, do not keep them", async () => {
    const retiredAt = clock.now();
    const live = await storeCredentials(db, services.cipher, await db.shop.findUniqueOrThrow({ where: { id: shopId } }), "live", { deviceKey: randomUUID(), secretKeyHex: SECRET });
    await retireCredentials(db, live, "live", retiredAt);
    // Begun on the retired credentials, the minute before they were retired: rejected, and watched for a week.
    const before = await createPayment(rows(), { gatewayEnv: "live", state: "failed", gatewayStatus: "EX", gatewayOrderId: randomUUID(), createdAt: new Date(retiredAt.getTime() - 60_000) });
    // Begun since, on the device in use: open, settled from a notification a read is still to check, and rejected and watched.
    clock.at = new Date(retiredAt.getTime() + 60_000);
    const since = { gatewayEnv: "live", createdAt: retiredAt };
    await createPayment(rows(), { ...since, state: "awaiting_payment", gatewayOrderId: randomUUID() });
    await createPayment(rows(), { ...since, state: "paid", gatewayStatus: "CO", gatewayOrderId: randomUUID(), unverifiedSince: clock.now() });
    await createPayment(rows(), { ...since, state: "failed", gatewayStatus: "EX", gatewayOrderId: randomUUID() });
    expect((await purge()).retiredDevices).toBe(0);

    // The week of the one begun on them is over; the others are still followed.
    clock.at = new Date(before.createdAt.getTime() + LATE_PAYMENT_WATCH_MS + 1);
    expect((await purge()).retiredDevices).toBe(1);
    expect(await db.shop.findUniqueOrThrow({ where: { id: shopId } })).toMatchObject(NO_RETIRED_CREDENTIALS.live);
  });

  it("credentials an earlier release retired, with no time, are given the pass's: the payments made until then keep them, and none made after", async () => {
    // Retired by an instance of the release before (a rolling deploy): no time.
    await db.shop.update({ where: { id: shopId }, data: { liveRetiredDeviceKeyEnc: "sealed-device-key", liveRetiredSecretKeyEnc: "sealed-secret-key", liveRetiredAt: null } });
    const open = await createPayment(rows(), { gatewayEnv: "live", state: "awaiting_payment", gatewayOrderId: randomUUID(), createdAt: daysAgo(1) });
    expect((await purge()).retiredDevices).toBe(0);
    expect((await db.shop.findUniqueOrThrow({ where: { id: shopId } })).liveRetiredAt).toEqual(clock.now());

    clock.at = new Date(START.getTime() + 60_000);
    await db.payment.update({ where: { id: open.id }, data: { state: "paid", gatewayStatus: "CO" } });
    await createPayment(rows(), { gatewayEnv: "live", state: "awaiting_payment", gatewayOrderId: randomUUID(), createdAt: clock.now() });
    expect((await purge()).retiredDevices).toBe(1);
    expect(await db.shop.findUniqueOrThrow({ where: { id: shopId } })).toMatchObject(NO_RETIRED_CREDENTIALS.live);
  });

  it("a payment's customer details are erased once it ended the customer data retention ago, and its timeline says so", async () => {
    const days = DEFAULT_CUSTOMER_DATA_RETENTION_DAYS;
    const ended = (columns: Partial<Prisma.PaymentUncheckedCreateInput>) =>
      createPayment(rows(), { state: "paid", gatewayOrderId: randomUUID(), ...CUSTOMER, createdAt: daysAgo(days + 2), finalizedAt: daysAgo(days + 1), ...columns });
    const paid = await ended({});
    const rejected = await ended({ state: "failed", gatewayStatus: "EX" });
    // Shopify never took a final call for it (the outbox's call was refused): its age counts.
    const neverFinalized = await ended({ state: "not_started", gatewayOrderId: null, finalizedAt: null });
    const flagHandled = await ended({ attention: "overpaid", attentionDetail: "Paid 110 %", attentionResolvedAt: daysAgo(2) });
    // Kept: ended within the retention; still open however old; settled from a notification
    // still to be checked; flagged and not handled yet (the shopper may have to be reached).
    const endedLately = await ended({ finalizedAt: daysAgo(days - 1) });
    const open = await ended({ state: "awaiting_payment", finalizedAt: null });
    const unchecked = await ended({ unverifiedSince: daysAgo(days + 1) });
    const flagOpen = await ended({ attention: "late_payment", attentionDetail: "Crypto after the rejection" });

    const result = await purge();
    expect(result.customerRecords).toBe(4);
    for (const payment of [paid, rejected, neverFinalized, flagHandled]) {
      const after = await db.payment.findUniqueOrThrow({ where: { id: payment.id } });
      expect(after).toMatchObject({ customerEmail: null, customerName: null, customerPhone: null, billingAddress: null, amount: payment.amount, gatewayOrderId: payment.gatewayOrderId, state: payment.state });
      const entry = await db.paymentEvent.findFirstOrThrow({ where: { paymentId: payment.id, type: CUSTOMER_DATA_ERASED } });
      expect(entry.at).toEqual(clock.at);
      expect(describeEvent(entry.type, entry.detail)).toEqual({ title: "Customer details erased", description: expect.stringContaining(`erased ${days} days after the payment ended`) });
    }
    for (const payment of [endedLately, open, unchecked, flagOpen]) {
      expect(await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject(CUSTOMER);
      expect(await erasures(payment.id)).toBe(0);
    }

    // Once erased, nothing is left to erase: a later pass writes no second entry.
    expect((await purge()).customerRecords).toBe(0);
    expect(await erasures(paid.id)).toBe(1);
    // A flag handled later lets the next pass erase the details.
    await db.payment.update({ where: { id: flagOpen.id }, data: { attentionResolvedAt: clock.at } });
    expect((await purge()).customerRecords).toBe(1);
    expect(await db.payment.findUniqueOrThrow({ where: { id: flagOpen.id } })).toMatchObject({ customerEmail: null, billingAddress: null });
  });

  it("a customer's data request report goes once it came the customer data retention ago, downloaded or not", async () => {
    const days = DEFAULT_CUSTOMER_DATA_RETENTION_DAYS;
    await dataRequest(daysAgo(days + 1), daysAgo(days));
    await dataRequest(daysAgo(days + 1));
    const recent = await dataRequest(daysAgo(days - 1));
    expect((await purge()).dataRequestReports).toBe(2);
    expect(ids(await db.customerDataRequest.findMany())).toEqual([recent.id]);
  });

  it("a data request webhook taken is remembered against Shopify's redeliveries for the retention, then goes", async () => {
    const days = DEFAULT_RETENTION_DAYS;
    for (const [webhookId, at] of [["old-delivery", daysAgo(days + 1)], ["recent-delivery", daysAgo(days - 1)]] as const) {
      await db.dataRequestDelivery.create({ data: { shopId, webhookId, receivedAt: at } });
    }
    expect((await purge()).dataRequestDeliveries).toBe(1);
    expect((await db.dataRequestDelivery.findMany({ where: { shopId } })).map((d) => d.webhookId)).toEqual(["recent-delivery"]);
    await db.dataRequestDelivery.deleteMany();
  });

  it("several instances erasing customer details at once share the backlog and erase each payment once", async () => {
    const backlog = 40;
    const ended = await Promise.all(
      Array.from({ length: backlog }, () => createPayment(rows(), { state: "paid", ...CUSTOMER, createdAt: daysAgo(200), finalizedAt: daysAgo(200) })),
    );
    const passes = await Promise.all([1, 2, 3].map(() => purge({ batchSize: 7, maxBatches: 100 })));
    expect(passes.reduce((sum, pass) => sum + pass.customerRecords, 0)).toBe(backlog);
    expect(await db.payment.count({ where: { customerEmail: { not: null } } })).toBe(0);
    for (const payment of ended) expect(await erasures(payment.id)).toBe(1);
  });

  it("a retention under the minimum is refused, not applied", async () => {
    await webhook(shopId, daysAgo(1), daysAgo(1));
    const recent = await webhook(shopId, daysAgo(MIN_RETENTION_DAYS - 1), daysAgo(MIN_RETENTION_DAYS - 1));
    await expect(purge({ retentionDays: MIN_RETENTION_DAYS - 1 })).rejects.toThrow(/under the minimum/);
    await expect(purge({ customerDataDays: MIN_CUSTOMER_DATA_RETENTION_DAYS - 1 })).rejects.toThrow(/customer data retention of 29 days is under the minimum/);
    expect(await db.gatewayWebhook.findUnique({ where: { id: recent.id } })).not.toBeNull();
  });

  it("several instances purging at once share the backlog, and none fails", async () => {
    const backlog = 60;
    await webhook(shopId, daysAgo(1), daysAgo(1));
    for (let i = 0; i < backlog; i++) {
      await webhook(shopId, daysAgo(40), daysAgo(40));
      await db.rejectedWebhook.create({ data: { shopId, reason: "bad_signature", at: daysAgo(40) } });
      await message({ kind: "refund.reject" });
    }

    const passes = await Promise.all([1, 2, 3].map(() => purge({ batchSize: 7, maxBatches: 100 })));
    const total = (table: "gatewayWebhooks" | "rejectedWebhooks" | "outboxMessages") => passes.reduce((sum, pass) => sum + pass[table], 0);
    expect([total("gatewayWebhooks"), total("rejectedWebhooks"), total("outboxMessages")]).toEqual([backlog, backlog, backlog]);
    expect(passes.every((pass) => !pass.more)).toBe(true);
    expect([await db.gatewayWebhook.count(), await db.rejectedWebhook.count(), await db.outboxMessage.count()]).toEqual([1, 0, 0]);
  });

  it("the background workers purge with the configured retention and log one line of counts", async () => {
    const latest = await webhook(shopId, daysAgo(1), daysAgo(1));
    await webhook(shopId, daysAgo(MIN_RETENTION_DAYS + 1), daysAgo(MIN_RETENTION_DAYS + 1));
    const kept = await webhook(shopId, daysAgo(MIN_RETENTION_DAYS - 1), daysAgo(MIN_RETENTION_DAYS - 1));
    await db.rejectedWebhook.create({ data: { shopId, reason: "bad_signature", at: daysAgo(MIN_RETENTION_DAYS + 1) } });
    await message({ kind: "refund.reject", createdAt: daysAgo(MIN_RETENTION_DAYS + 1), doneAt: daysAgo(MIN_RETENTION_DAYS + 1) });
    const ended = (days: number, customerEmail: string) => createPayment(rows(), { state: "paid", customerEmail, createdAt: daysAgo(days), finalizedAt: daysAgo(days) });
    const customerErased = await ended(MIN_CUSTOMER_DATA_RETENTION_DAYS + 1, "erased@example.com");
    const customerKept = await ended(MIN_CUSTOMER_DATA_RETENTION_DAYS - 1, "kept@example.com");
    await dataRequest(daysAgo(MIN_CUSTOMER_DATA_RETENTION_DAYS + 1));

    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: "info", sink: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    // No gateway is reachable: nothing here needs one.
    const env = parseEnv({
      NODE_ENV: "test",
      RETENTION_DAYS: String(MIN_RETENTION_DAYS),
      CUSTOMER_DATA_RETENTION_DAYS: String(MIN_CUSTOMER_DATA_RETENTION_DAYS),
      GATEWAY_SANDBOX_URL: "http://127.0.0.1:9/api/v1", GATEWAY_BASE_URL: "http://127.0.0.1:9/api/v1" });
    const instance = createServices(env, { db, sql: rows().sql, clock, logger });
    const workers = startWorkers(instance);
    try {
      const deadline = Date.now() + 10_000;
      while (!lines.some((line) => line.msg === "Expired rows purged") && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      await workers.stop();
    }

    const purged = lines.filter((line) => line.msg === "Expired rows purged");
    expect(purged).toHaveLength(1);
    const { time: _time, ...fields } = purged[0]!;
    expect(fields).toEqual({
      level: "info",
      msg: "Expired rows purged",
      retentionDays: MIN_RETENTION_DAYS,
      customerDataDays: MIN_CUSTOMER_DATA_RETENTION_DAYS,
      retiredDevices: 0,
      gatewayWebhooks: 1,
      rejectedWebhooks: 1,
      outboxMessages: 1,
      customerRecords: 1,
      dataRequestReports: 1,
      dataRequestDeliveries: 0,
      more: false,
    });
    expect(await db.payment.findUniqueOrThrow({ where: { id: customerKept.id } })).toMatchObject({ customerEmail: "kept@example.com" });
    expect(await db.payment.findUniqueOrThrow({ where: { id: customerErased.id } })).toMatchObject({ customerEmail: null });
    expect(ids(await db.gatewayWebhook.findMany())).toEqual(ids([latest, kept]));
    expect([await db.rejectedWebhook.count(), await db.outboxMessage.count()]).toEqual([0, 0]);
  });
});
