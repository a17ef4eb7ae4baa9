// The migration that splits the coin settings per gateway environment, on SQLite and
// PostgreSQL: a shop's fixed coin and offered coins so far go to the environment the settings
// page listed its coins from (the sandbox in test mode, else live; the one with a device when
// only one has it), and the other environment starts with none; the old columns are left as
// they were, and the client no longer names them.
import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../generated/prisma/sqlite/client";
import { openAppDatabase, type Database } from "../../app/db/database.server";
import { applyMigrations, loadMigrations, migrationsDir } from "../../app/db/migrate.server";
import type { PlainSql } from "../../app/db/plain-sql.server";
import { ROW_DATABASES } from "../support/row-databases";

const MIGRATION = "20261124150000_coin_settings_per_environment";

interface Before {
  domain: string;
  testMode: boolean;
  live: boolean;
  sandbox: boolean;
  expected: "live" | "sandbox";
}

const SHOPS: Before[] = [
  { domain: "test-mode-sandbox.myshopify.com", testMode: true, live: false, sandbox: true, expected: "sandbox" },
  { domain: "test-mode-both.myshopify.com", testMode: true, live: true, sandbox: true, expected: "sandbox" },
  { domain: "test-mode-live-only.myshopify.com", testMode: true, live: true, sandbox: false, expected: "live" },
  { domain: "test-mode-none.myshopify.com", testMode: true, live: false, sandbox: false, expected: "sandbox" },
  { domain: "live-both.myshopify.com", testMode: false, live: true, sandbox: true, expected: "live" },
  { domain: "live-sandbox-only.myshopify.com", testMode: false, live: false, sandbox: true, expected: "sandbox" },
  { domain: "live-none.myshopify.com", testMode: false, live: false, sandbox: false, expected: "live" },
];

describe.each(ROW_DATABASES)("on $name", (database) => {
  let url: string;
  let drop: () => Promise<void>;
  let db: Database;
  let sql: PlainSql;

  beforeAll(async () => {
    ({ url, drop } = await database.open());
    // The database as it was before the migration: every earlier migration, from a copy of the folder without it.
    const dir = migrationsDir(url);
    const root = mkdtempSync(join(tmpdir(), "coin-migration-"));
    const earlier = migrationsDir(url, root);
    for (const migration of loadMigrations(dir).filter((m) => m.name < MIGRATION)) cpSync(join(dir, migration.name), join(earlier, migration.name), { recursive: true });
    await applyMigrations(url, { root });
    ({ db, sql } = openAppDatabase(url));
  });

  afterAll(async () => {
    await db?.$disconnect();
    await drop?.();
  });

  it("moves each shop's coin settings to the environment its settings page showed", async () => {
    for (const [n, shop] of SHOPS.entries()) {
      await sql.execute(Prisma.sql`
        INSERT INTO "Shop" ("id", "shopDomain", "webhookToken", "liveDeviceKeyEnc", "sandboxDeviceKeyEnc", "checkoutMode", "fixedCurrency", "offeredCurrencies", "testMode", "updatedAt")
        VALUES (${`shop-${n}`}, ${shop.domain}, ${`migration-token-${n}`}, ${shop.live ? "sealed-live" : null}, ${shop.sandbox ? "sealed-sandbox" : null},
          ${"fixed_coin"}, ${`COIN_${n}`}, ${JSON.stringify([`OFFERED_${n}`])}, ${shop.testMode}, ${new Date()})`);
    }
    await sql.execute(Prisma.sql`INSERT INTO "Shop" ("id", "shopDomain", "webhookToken", "updatedAt") VALUES (${"shop-plain"}, ${"plain.myshopify.com"}, ${"migration-token-plain"}, ${new Date()})`);

    // This migration, then every later one: the shops are read back through today's schema.
    const later = loadMigrations(migrationsDir(url)).map((m) => m.name).filter((name) => name >= MIGRATION);
    expect(await applyMigrations(url)).toEqual(later);
    expect(later[0]).toBe(MIGRATION);

    for (const [n, shop] of SHOPS.entries()) {
      const stored = await db.shop.findUniqueOrThrow({ where: { shopDomain: shop.domain } });
      const chosen = { fixed: `COIN_${n}`, offered: JSON.stringify([`OFFERED_${n}`]) };
      const none = { fixed: null, offered: "[]" };
      const [liveCoins, sandboxCoins] = shop.expected === "live" ? [chosen, none] : [none, chosen];
      expect(
        { live: { fixed: stored.liveFixedCurrency, offered: stored.liveOfferedCurrencies }, sandbox: { fixed: stored.sandboxFixedCurrency, offered: stored.sandboxOfferedCurrencies } },
        shop.domain,
      ).toEqual({ live: liveCoins, sandbox: sandboxCoins });
    }
    expect(await db.shop.findUniqueOrThrow({ where: { shopDomain: "plain.myshopify.com" } })).toMatchObject({
      liveFixedCurrency: null,
      sandboxFixedCurrency: null,
      liveOfferedCurrencies: "[]",
      sandboxOfferedCurrencies: "[]",
    });
    // The single settings stay as they were, for instances still on the previous release during a rolling deploy.
    const old = await sql.query<{ fixedCurrency: string | null; offeredCurrencies: string }>(Prisma.sql`SELECT "fixedCurrency", "offeredCurrencies" FROM "Shop" WHERE "id" = ${"shop-1"}`);
    expect(old).toEqual([{ fixedCurrency: "COIN_1", offeredCurrencies: JSON.stringify(["OFFERED_1"]) }]);
  });

  it("the client names neither old column, so the next release can drop them under running instances", async () => {
    // What that release's migration will do, done here: today's client must not notice.
    await sql.execute(Prisma.sql`ALTER TABLE "Shop" DROP COLUMN "fixedCurrency"`);
    await sql.execute(Prisma.sql`ALTER TABLE "Shop" DROP COLUMN "offeredCurrencies"`);
    const created = await db.shop.create({ data: { shopDomain: "after-drop.myshopify.com", webhookToken: "migration-token-after-drop" } });
    await db.shop.update({ where: { id: created.id }, data: { liveFixedCurrency: "BTC" } });
    expect((await db.shop.findMany({ include: { payments: true } })).map((shop) => shop.shopDomain)).toContain("after-drop.myshopify.com");
    expect(await db.shop.findUniqueOrThrow({ where: { shopDomain: "after-drop.myshopify.com" } })).toMatchObject({ liveFixedCurrency: "BTC", liveOfferedCurrencies: "[]" });
  });
});
