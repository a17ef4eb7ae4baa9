// The reconciler's reads on SQLite search indexes, not every payment ever stored (payments are
// never deleted): its pass's read of every payment it follows (paymentsOnCredentials), every
// RECONCILE_INTERVAL_MS, and each shop's reads of its open and unverified payments of one
// environment. SQLite searches no index for IS NOT NULL and has no statistics to choose one by,
// so the conditions are written as ranges and the indexes fit them. Checked on the plans of the
// very statements the Prisma client sends, over 60,000 finished payments.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { PrismaLibSQL } from "@prisma/adapter-libsql";
import { expect, it } from "vitest";
import { applyMigrations } from "../../app/db/migrate.server";
import { AWAITING_VERIFICATION, OPEN_PAYMENT_STATES, paymentsOnCredentials } from "../../app/payments/payment-state";
import { PrismaClient } from "../../generated/prisma/sqlite/client";

async function seeded(): Promise<string> {
  const url = `file:${join(mkdtempSync(join(tmpdir(), "reconciler-plans-")), "app.db")}`;
  await applyMigrations(url);
  const raw = createClient({ url });
  await raw.execute(`INSERT INTO "Shop" ("id","shopDomain","webhookToken","createdAt","updatedAt") VALUES ('s1','a.myshopify.com','tok','2026-01-01T00:00:00.000+00:00','2026-01-01T00:00:00.000+00:00')`);
  // 60,000 finished payments of earlier months (a third rejected), none followed any more.
  await raw.execute(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60000)
    INSERT INTO "Payment" ("id","shopId","shopifyPaymentId","gid","groupId","amount","currency","test","kind","cancelUrl","gatewayEnv","state","gatewayOrderId","createdAt","updatedAt")
    SELECT 'p' || i, 's1', 'sp' || i, 'g', 'g', '1.00', 'EUR', 0, 'sale', 'https://x', 'live', CASE WHEN i % 3 = 0 THEN 'failed' ELSE 'paid' END, 'o' || i,
      '2026-01-01T00:00:00.000+00:00', '2026-01-01T00:00:00.000+00:00' FROM n`);
  raw.close();
  return url;
}

/** The SQLite plan of each statement the Prisma client sends for `work`. */
async function plansOf(url: string, work: (db: PrismaClient) => Promise<unknown>): Promise<string[][]> {
  const statements: { query: string; params: unknown[] }[] = [];
  const db = new PrismaClient({ adapter: new PrismaLibSQL({ url }), log: [{ emit: "event", level: "query" }] });
  db.$on("query", (event) => statements.push({ query: event.query, params: JSON.parse(event.params) as unknown[] }));
  await work(db);
  await db.$disconnect();
  const raw = createClient({ url });
  const plans: string[][] = [];
  for (const s of statements.filter((s) => s.query.includes("`Payment`"))) {
    plans.push((await raw.execute({ sql: `EXPLAIN QUERY PLAN ${s.query}`, args: s.params as never[] })).rows.map((row) => String(row.detail)));
  }
  raw.close();
  return plans;
}

it("SQLite: the reconciler's read of the payments it follows does not scan every payment", async () => {
  const url = await seeded();
  // The statement reconcileOnce sends, as the Prisma client writes it.
  const [plan] = await plansOf(url, (db) =>
    db.payment.findMany({ where: paymentsOnCredentials(new Date("2026-11-25T12:00:00.000Z")), select: { shopId: true }, distinct: ["shopId"] }),
  );
  expect(plan!.filter((step) => /^SCAN (main\.)?Payment\b/.test(step))).toEqual([]);
}, 60_000);

// reconcileShopEnv (app/payments/reconcile.ts) reads a shop's open and unverified payments of
// one environment, for every shop with a followed payment, every pass: not through the
// (gatewayEnv, gatewayOrderId) unique index, which reads every payment of the environment.
it("SQLite: the reconciler's per-shop reads search the open and unverified payments, not every payment of the environment", async () => {
  const url = await seeded();
  const plans = await plansOf(url, (db) =>
    Promise.all([
      db.payment.findMany({ where: { shopId: "s1", gatewayEnv: "live", state: { in: [...OPEN_PAYMENT_STATES] } } }),
      db.payment.findMany({ where: { shopId: "s1", gatewayEnv: "live", ...AWAITING_VERIFICATION, gatewayOrderId: { not: null } } }),
    ]),
  );
  expect(plans.flat().filter((step) => /^SCAN (main\.)?Payment\b|Payment_gatewayEnv_gatewayOrderId_key \(gatewayEnv=\?( AND gatewayOrderId>\?)?\)/.test(step))).toEqual([]);
}, 60_000);
