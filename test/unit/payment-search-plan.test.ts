// Finding a payment by a reference in the admin (its Shopify ids, its gateway order, a
// transaction hash) reads that payment through indexes, not the shop's payments one by one,
// however many the shop has. Every statement the search's list page and CSV file run is asked
// for SQLite's query plan, on a migrated database: none may walk the shop's payments (a plan
// step on Payment whose only condition is the shop) or a whole table.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type InValue } from "@libsql/client";
import { PrismaLibSQL } from "@prisma/adapter-libsql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listPayments } from "../../app/admin/payments.server";
import { paymentsCsv } from "../../app/admin/payments-export.server";
import { paymentsHolding } from "../../app/admin/payment-filters";
import { applyMigrations } from "../../app/db/migrate.server";
import { PrismaClient } from "../../generated/prisma/sqlite/client";
import { paymentColumns } from "../support/payment-rows";

const url = `file:${join(mkdtempSync(join(tmpdir(), "search-plan-")), "app.db")}`;
const statements: { sql: string; args: InValue[] }[] = [];
let db: PrismaClient;
let shopId = "";
let otherShopId = "";

/** The plan's steps that read rows of a payment table: "SCAN Payment…" or "SEARCH PaymentTransaction USING INDEX … (txHash=?)". */
async function paymentSteps(statement: { sql: string; args: InValue[] }): Promise<string[]> {
  const raw = createClient({ url });
  try {
    const plan = await raw.execute({ sql: `EXPLAIN QUERY PLAN ${statement.sql}`, args: statement.args });
    return plan.rows.map((row) => String(row.detail)).filter((detail) => /^(SCAN|SEARCH) (main\.)?"?Payment(Transaction)?\b/.test(detail));
  } finally {
    raw.close();
  }
}

/** A step that reads every row of a table, or every payment of the shop. */
const walksPayments = (step: string) => step.startsWith("SCAN") || /\(shopId=\?\)$/.test(step);

beforeAll(async () => {
  await applyMigrations(url);
  const logged = new PrismaClient({ adapter: new PrismaLibSQL({ url }), log: [{ emit: "event", level: "query" }] });
  logged.$on("query", (event) => statements.push({ sql: event.query, args: JSON.parse(event.params) as InValue[] }));
  db = logged as unknown as PrismaClient;
  shopId = (await db.shop.create({ data: { shopDomain: "search-plan.myshopify.com", webhookToken: "t1" } })).id;
  otherShopId = (await db.shop.create({ data: { shopDomain: "other-plan.myshopify.com", webhookToken: "t2" } })).id;
  const created = await db.payment.createManyAndReturn({
    data: Array.from({ length: 40 }, (_, i) => paymentColumns(i % 4 === 3 ? otherShopId : shopId, { gatewayOrderId: `order-${i}`, state: "paid", gatewayStatus: "CO" })),
    select: { id: true },
  });
  await db.paymentTransaction.createMany({
    data: created.map((p, i) => ({ paymentId: p.id, txHash: `0x${String(i).padStart(64, "0")}`, currency: "ETH", amount: "0.01", confirmed: true, seenAt: new Date() })),
  });
});

afterAll(async () => {
  await db?.$disconnect();
});

describe("the admin's search by reference", () => {
  it("finds the shop's payment by each reference, and none of another shop's", async () => {
    const wanted = await db.payment.findFirstOrThrow({ where: { shopId, gatewayOrderId: "order-5" }, include: { transactions: true } });
    for (const reference of [wanted.shopifyPaymentId, wanted.gid, "order-5", wanted.transactions[0]!.txHash]) {
      expect(await paymentsHolding(db, shopId, reference), reference).toEqual([wanted.id]);
    }
    // order-7 and its transaction are the other shop's.
    expect(await paymentsHolding(db, shopId, "order-7")).toEqual([]);
    expect(await paymentsHolding(db, shopId, `0x${"7".padStart(64, "0")}`)).toEqual([]);
    expect(await paymentsHolding(db, otherShopId, "order-7")).toHaveLength(1);
  });

  it("reads no statement of the list page or the CSV file along the shop's payments", async () => {
    const references = ["order-9", `0x${"9".padStart(64, "0")}`, "gid://shopify/PaymentSession/none"];
    statements.length = 0;
    for (const q of references) {
      const list = await listPayments(db, shopId, { q });
      expect(list.rows.length, q).toBeLessThanOrEqual(1);
      const reader = paymentsCsv(db, shopId, { q }).getReader();
      while (!(await reader.read()).done);
    }
    // A condition Prisma writes as `1=0` (no payment holds the reference) is tested once,
    // before any row is read: such a statement reads nothing, whatever its plan.
    const selects = statements.filter((s) => /^\s*SELECT/i.test(s.sql) && !/\b1=0\b/.test(s.sql));
    expect(selects.length).toBeGreaterThan(references.length * 4);
    for (const statement of selects) {
      const steps = await paymentSteps(statement);
      expect(steps.filter(walksPayments), `${statement.sql}\n${steps.join("\n")}`).toEqual([]);
    }
  });

  it("would walk the shop's payments with the list's plain filter: the check above can fail", async () => {
    // The condition the search replaced: one OR across the references, beside the shop.
    statements.length = 0;
    await db.payment.findMany({ where: { shopId, OR: [{ gid: "x" }, { gatewayOrderId: "x" }, { transactions: { some: { txHash: "x" } } }] }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: 25 });
    const steps = (await Promise.all(statements.map(paymentSteps))).flat();
    expect(steps.some(walksPayments), steps.join("\n")).toBe(true);
  });
});
