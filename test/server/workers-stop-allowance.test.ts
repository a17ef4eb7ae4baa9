// Graceful shutdown with the workers on the request thread (WORKER_THREAD=false, the default):
// SIGTERM (server/main.ts) closes the server and stops the workers side by side. Stopping, the
// outbox pass starts no more Shopify calls (those it has not begun go back, pending and due,
// for whoever runs next) and lets the calls under way end; and the stop is not waited for
// beyond its allowance, so that shutdown ends before main.ts's 25 s forced exit even while
// Shopify hangs.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { err } from "neverthrow";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseEnv } from "../../app/config/env.server";
import { openAppDatabase, type Database } from "../../app/db/database.server";
import type { PlainSql } from "../../app/db/plain-sql.server";
import { applyMigrations } from "../../app/db/migrate.server";
import { createLogger } from "../../app/lib/logger.server";
import { enqueue, finalMessageKey } from "../../app/payments/outbox";
import { createServices } from "../../app/services.server";
import type { PaymentsAppsClient, PaymentsAppsResult } from "../../app/shopify/payments-apps/client";
import { startWorkers } from "../../app/workers.server";
import { paymentColumns } from "../support/payment-rows";

const SHOP = "workers-stop.myshopify.com";

let db: Database;
let sql: PlainSql;
/** Every hanging call's release: the file's end lets them all answer before the database closes. */
const hanging: (() => void)[] = [];
const passes: Promise<unknown>[] = [];

beforeAll(async () => {
  const url = `file:${join(mkdtempSync(join(tmpdir(), "workers-stop-")), "app.db")}`;
  await applyMigrations(url);
  ({ db, sql } = openAppDatabase(url));
});

afterAll(async () => {
  hanging.forEach((release) => release());
  await Promise.allSettled(passes);
  await db.$disconnect();
});

/** A Shopify client whose every call hangs until released, then times out as the real client does; `started` lists the calls begun. */
function hangingShopify(started: string[]): PaymentsAppsClient {
  const call = async (gid: string): Promise<PaymentsAppsResult> => {
    started.push(gid);
    await new Promise<void>((resolve) => hanging.push(resolve));
    return err({ kind: "timeout", retryable: true, operation: "PaymentSessionResolve", timeoutMs: 15_000, message: "No complete answer within 15000 ms" } as never);
  };
  return { endpoint: "https://example.test", resolvePaymentSession: call, pendPaymentSession: call, rejectPaymentSession: call } as unknown as PaymentsAppsClient;
}

async function paidPaymentsAwaitingShopify(count: number): Promise<string[]> {
  const shop = (await db.shop.findUnique({ where: { shopDomain: SHOP } })) ?? (await db.shop.create({ data: { shopDomain: SHOP, webhookToken: "workers-stop-webhook-token-01" } }));
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const payment = await db.payment.create({ data: paymentColumns(shop.id, { state: "paid" }) });
    const message = await db.$transaction((tx) => enqueue(tx, { shopDomain: SHOP, paymentId: payment.id, dedupeKey: finalMessageKey(payment.id), payload: { kind: "payment.resolve", gid: payment.gid }, now: new Date() }));
    ids.push(message.id);
  }
  return ids;
}

function workersOnHangingShopify(started: string[], lines: { msg: string }[] = []) {
  const env = parseEnv({ NODE_ENV: "test", DATABASE_URL: "file:unused.db", LOG_LEVEL: "info", OUTBOX_INTERVAL_MS: "50", OUTBOX_CONCURRENCY: "8", RECONCILE_INTERVAL_MS: "3600000" });
  const logger = createLogger({ sink: (line) => void lines.push(JSON.parse(line) as { msg: string }) });
  const base = createServices(env, { db, sql, logger });
  const client = hangingShopify(started);
  return { ...base, shopify: { ...base.shopify, forShop: async () => client } };
}

async function untilStarted(started: string[], count: number) {
  const until = Date.now() + 10_000;
  while (started.length < count && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(started.length).toBe(count);
}

it("stopping, the outbox starts no more calls, gives back those it has not begun, and stops once the calls under way end", async () => {
  const messages = await paidPaymentsAwaitingShopify(10);
  const started: string[] = [];
  const workers = startWorkers(workersOnHangingShopify(started));
  // The pass has begun 8 calls (its concurrency), with 2 messages still to go.
  await untilStarted(started, 8);

  const stopped = workers.stop();
  passes.push(stopped);
  await new Promise((resolve) => setTimeout(resolve, 300));
  hanging.splice(0).forEach((release) => release());
  await stopped;

  expect(started).toHaveLength(8);
  const rows = await db.outboxMessage.findMany({ where: { id: { in: messages } } });
  // Every message is pending and free: the 8 to retry after their timeout, the 2 given back untried.
  expect(rows.map((row) => [row.status, row.lockedBy])).toEqual(rows.map(() => ["pending", null]));
  expect(rows.filter((row) => row.attempts === 0)).toHaveLength(2);
  await db.outboxMessage.deleteMany({ where: { id: { in: messages } } });
});

it("a stop that outlasts its allowance (Shopify still hanging) returns at the allowance's end, and says so", async () => {
  const messages = await paidPaymentsAwaitingShopify(1);
  const started: string[] = [];
  const lines: { msg: string }[] = [];
  const workers = startWorkers(workersOnHangingShopify(started, lines), { stopAllowanceMs: 500 });
  await untilStarted(started, 1);

  const stopped = workers.stop().then(() => "returned" as const);
  passes.push(stopped);
  expect(await Promise.race([stopped, new Promise((resolve) => setTimeout(() => resolve("still waiting"), 5_000))])).toBe("returned");
  expect(lines.map((line) => line.msg)).toContain("Background workers still busy when their stop allowance ran out; what they hold is taken over once its claims lapse");
  hanging.splice(0).forEach((release) => release());
  await db.outboxMessage.deleteMany({ where: { id: { in: messages } } });
});
