// Migration 20261125120000 rebuilds PaymentTransaction on SQLite (to declare its block 64 bits).
// Rows stored before it keep their values (a block past 2^31 included), and the unique index and
// the foreign key's cascade stay: a payment deleted, or its shop, deletes its transactions.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { describe, expect, it } from "vitest";
import { openAppDatabase } from "../../app/db/database.server";
import { applyMigrations } from "../../app/db/migrate.server";

const MIGRATION = "20261125120000_transaction_block_bigint";

describe("the block migration on SQLite", () => {
  it("keeps rows, the index and the cascade", async () => {
    const root = mkdtempSync(join(tmpdir(), "block-migration-"));
    cpSync("prisma/migrations", join(root, "prisma/migrations"), { recursive: true });
    rmSync(join(root, "prisma/migrations", MIGRATION), { recursive: true });
    const url = `file:${join(root, "app.db")}`;
    await applyMigrations(url, { root });
    const raw = createClient({ url });
    await raw.execute(`INSERT INTO "Shop" ("id","shopDomain","webhookToken","createdAt","updatedAt") VALUES ('s1','m.myshopify.com','tok-migration-0000001',0,0)`).catch(async () => {
      // Columns with defaults differ between releases: let the client fill them.
      const { db } = openAppDatabase(url);
      await db.shop.create({ data: { id: "s1", shopDomain: "m.myshopify.com", webhookToken: "tok-migration-0000001" } });
      await db.$disconnect();
    });
    const { db: before } = openAppDatabase(url);
    for (const id of ["p1", "p2"]) {
      await before.payment.create({
        data: { id, shopId: "s1", shopifyPaymentId: id, gid: `gid://shopify/PaymentSession/${id}`, groupId: id, amount: "1.00", currency: "EUR", test: true, kind: "sale", cancelUrl: "https://x", gatewayEnv: "sandbox", state: "paid" },
      });
    }
    await before.$disconnect();
    await raw.execute(`INSERT INTO "PaymentTransaction" VALUES ('t1','p1','h1','BTC','0.1',1,3000000000,'2026-11-25T10:00:00.000Z')`);
    await raw.execute(`INSERT INTO "PaymentTransaction" VALUES ('t2','p1','h2','BTC','0.2',0,NULL,'2026-11-25T10:00:00.000Z')`);
    await raw.execute(`INSERT INTO "PaymentTransaction" VALUES ('t3','p2','h3','BTC','0.3',1,870001,'2026-11-25T10:00:00.000Z')`);
    raw.close();

    expect(await applyMigrations(url)).toEqual([MIGRATION]);
    const after = createClient({ url });
    await after.execute("PRAGMA foreign_keys = ON");
    expect((await after.execute(`SELECT "id","block" FROM "PaymentTransaction" ORDER BY "id"`)).rows.map((r) => [r.id, r.block === null ? null : String(r.block)])).toEqual([
      ["t1", "3000000000"],
      ["t2", null],
      ["t3", "870001"],
    ]);
    expect((await after.execute(`PRAGMA index_list("PaymentTransaction")`)).rows.map((r) => [r.name, r.unique])).toContainEqual(["PaymentTransaction_paymentId_txHash_key", 1]);
    expect((await after.execute(`PRAGMA foreign_key_list("PaymentTransaction")`)).rows.map((r) => [r.table, r.on_delete])).toEqual([["Payment", "CASCADE"]]);
    expect((await after.execute(`PRAGMA foreign_key_check`)).rows).toEqual([]);
    after.close();

    const { db } = openAppDatabase(url);
    expect((await db.paymentTransaction.findUniqueOrThrow({ where: { id: "t1" } })).block).toBe(3_000_000_000n);
    await db.payment.delete({ where: { id: "p1" } });
    expect(await db.paymentTransaction.count()).toBe(1);
    await db.shop.delete({ where: { id: "s1" } });
    expect(await db.paymentTransaction.count()).toBe(0);
    await db.$disconnect();
  });
});
