// A PostgreSQL migration that cannot take a table's lock (a long transaction reads the table)
// waits at most its lock timeout, rolls back and tries again, instead of waiting in the lock
// queue, where every later query of the table would wait behind it: the app's own queries go
// through meanwhile. It is applied once the transaction ends; after its last try it fails,
// leaving the table and the history as they were.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyMigrations, loadMigrations } from "../../app/db/migrate.server";
import { createTestPostgresDatabase } from "../support/postgres";

const MIGRATION = "20261125120000_transaction_block_bigint";

describe("a PostgreSQL migration behind a long transaction", () => {
  let database: Awaited<ReturnType<typeof createTestPostgresDatabase>>;
  let root: string;
  const connect = () => database.connect();

  const blockType = async (client: pg.Client) =>
    (await client.query(`SELECT data_type FROM information_schema.columns WHERE table_name = 'PaymentTransaction' AND column_name = 'block'`)).rows[0]?.data_type as string;
  const recorded = async (client: pg.Client) => (await client.query(`SELECT 1 FROM "_prisma_migrations" WHERE migration_name = $1`, [MIGRATION])).rowCount;

  beforeAll(async () => {
    database = await createTestPostgresDatabase();
    // Every migration up to the one before the block's, so that the block's is still to come.
    root = mkdtempSync(join(tmpdir(), "migration-lock-"));
    cpSync("prisma/postgresql/migrations", join(root, "prisma/postgresql/migrations"), { recursive: true });
    for (const { name } of loadMigrations(join(root, "prisma/postgresql/migrations"))) {
      if (name >= MIGRATION) rmSync(join(root, "prisma/postgresql/migrations", name), { recursive: true });
    }
    await applyMigrations(database.url, { root });
  });

  afterAll(async () => {
    await database?.drop();
  });

  it("gives up after its tries without holding up the table's readers, and leaves nothing changed", async () => {
    const holder = await connect();
    await holder.query("BEGIN");
    await holder.query(`SELECT count(*) FROM "PaymentTransaction"`);

    const migrating = applyMigrations(database.url, { lockTimeoutMs: 300, lockTries: 3 });
    const outcome = migrating.then(
      () => "applied",
      (error: Error) => error.message,
    );
    // A reader that comes while the migration waits for its lock is answered while the long
    // transaction still holds the table (in the lock queue it would wait for the transaction).
    const reader = await connect();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await reader.query(`SELECT count(*) FROM "PaymentTransaction"`);
    expect(await outcome).toMatch(/could not take its locks in 3 tries/);

    const check = await connect();
    expect(await blockType(check)).toBe("integer");
    expect(await recorded(check)).toBe(0);
    await holder.query("COMMIT");
  }, 60_000);

  it("is applied once the long transaction ends within its tries", async () => {
    const holder = await connect();
    await holder.query("BEGIN");
    await holder.query(`SELECT count(*) FROM "PaymentTransaction"`);
    const migrating = applyMigrations(database.url, { lockTimeoutMs: 200, lockTries: 20 });
    await new Promise((resolve) => setTimeout(resolve, 700));
    await holder.query("COMMIT");

    expect(await migrating).toContain(MIGRATION);
    const check = await connect();
    expect(await blockType(check)).toBe("bigint");
    expect(await recorded(check)).toBe(1);
  }, 60_000);
});
