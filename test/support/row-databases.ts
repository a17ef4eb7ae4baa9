// The databases of the plain-SQL row tests: each file runs its tests on a fresh SQLite file
// and on a throwaway PostgreSQL database, migrated, with one shop.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "../../app/config/env.server";
import { openAppDatabase, type Database } from "../../app/db/database.server";
import { applyMigrations } from "../../app/db/migrate.server";
import type { PlainSql } from "../../app/db/plain-sql.server";
import { silentLogger } from "../../app/lib/logger.server";
import { createServices, type AppServices } from "../../app/services.server";
import type { Payment, Prisma } from "../../generated/prisma/sqlite/client";
import { forThisFile } from "./for-this-file";
import { paymentColumns } from "./payment-rows";
import { createTestPostgresDatabase } from "./postgres";

export interface RowDatabase {
  name: string;
  open(): Promise<{ url: string; drop(): Promise<void> }>;
}

export const ROW_DATABASES: RowDatabase[] = [
  { name: "SQLite", open: async () => ({ url: `file:${join(mkdtempSync(join(tmpdir(), "rows-")), "app.db")}`, drop: async () => undefined }) },
  { name: "PostgreSQL", open: createTestPostgresDatabase },
];

export interface OpenedRows {
  db: Database;
  sql: PlainSql;
  shopId: string;
}

/** The database for the describe block's tests, with the shop made; closed (and dropped) after them. */
export function rowsDatabaseForFile(database: RowDatabase, shop: { shopDomain: string; webhookToken: string }): () => OpenedRows {
  return forThisFile(
    `the ${database.name} database`,
    async () => {
      const { url, drop } = await database.open();
      await applyMigrations(url);
      const { db, sql } = openAppDatabase(url);
      const shopId = (await db.shop.create({ data: shop, select: { id: true } })).id;
      return { db, sql, shopId, drop };
    },
    async ({ db, drop }) => {
      await db.$disconnect();
      await drop();
    },
  );
}

/**
 * The app's services over the rows' database, on `clock`, with their gateways on a closed port:
 * nothing here may reach a real one. `db` stands in for the rows' client (one that counts calls).
 */
export function servicesOverRows(rows: OpenedRows, options: { clock: { now(): Date }; db?: Database }): AppServices {
  const env = parseEnv({ NODE_ENV: "test", GATEWAY_BASE_URL: "http://127.0.0.1:9/api/v1", GATEWAY_SANDBOX_URL: "http://127.0.0.1:9/api/v1" });
  return createServices(env, { db: options.db ?? rows.db, sql: rows.sql, clock: options.clock, logger: silentLogger });
}

/** Another shop, installed at `installedAt`, beside the rows' own; its id. */
export async function anotherShop(rows: OpenedRows, shop: { shopDomain: string; webhookToken: string }, installedAt: Date): Promise<string> {
  return (await rows.db.shop.create({ data: { ...shop, installedAt }, select: { id: true } })).id;
}

/** A payment of the shop (sandbox, 49.90 EUR, awaiting payment unless `columns` say otherwise). */
export function createPayment(rows: OpenedRows, columns: Partial<Prisma.PaymentUncheckedCreateInput> = {}): Promise<Payment> {
  return rows.db.payment.create({ data: paymentColumns(rows.shopId, columns) });
}

const MIGRATION_DIRS: Record<RowDatabase["name"], string> = { SQLite: "prisma/migrations", PostgreSQL: "prisma/postgresql/migrations" };

/** Runs one committed migration again, on rows stored as an earlier release stored them. */
export async function rerunMigration(database: RowDatabase, db: Database, migration: string): Promise<void> {
  const sql = readFileSync(`${MIGRATION_DIRS[database.name]}/${migration}/migration.sql`, "utf8");
  for (const statement of sql.replace(/^\s*--.*$/gm, "").split(";").map((s) => s.trim()).filter(Boolean)) await db.$executeRawUnsafe(statement);
}
