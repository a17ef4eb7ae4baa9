// A PostgreSQL migration marked to run outside a transaction builds its index CONCURRENTLY:
// writes to the table go on during the build (a plain CREATE INDEX holds them off until it
// ends, while the previous release's instances still serve), it is recorded once, and an index
// an interrupted build left invalid is dropped and built again on the next start.
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyMigrations, loadMigrations, NO_TRANSACTION_MARKER } from "../../app/db/migrate.server";
import { createTestPostgresDatabase } from "../support/postgres";

const INDEX = "OutboxMessage_review_kind_idx";

describe("a PostgreSQL migration run outside a transaction", () => {
  let database: Awaited<ReturnType<typeof createTestPostgresDatabase>>;
  const connect = () => database.connect();

  /** A copy of the committed migrations with one more, `sql`, after them. */
  function rootWith(name: string, sql: string): string {
    const root = mkdtempSync(join(tmpdir(), "migration-concurrent-"));
    const dir = join(root, "prisma/postgresql/migrations");
    cpSync("prisma/postgresql/migrations", dir, { recursive: true });
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, "migration.sql"), sql);
    return root;
  }

  const insertMessage = (client: pg.Client, key: string) =>
    client.query(`INSERT INTO "OutboxMessage" ("id", "shopDomain", "kind", "dedupeKey", "payload", "updatedAt") VALUES ($1, 'shop.myshopify.com', 'payment.resolve', $1, '{}', now())`, [key]);
  const indexValid = async (client: pg.Client) =>
    (await client.query<{ valid: boolean }>(`SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1`, [INDEX])).rows[0]?.valid;

  beforeAll(async () => {
    database = await createTestPostgresDatabase();
    await applyMigrations(database.url);
  });

  afterAll(async () => {
    await database?.drop();
  });

  it("lets writes through while the index waits for an open transaction, then records it once", async () => {
    const root = rootWith("29990101000000_concurrent_kind_index", `${NO_TRANSACTION_MARKER}\nCREATE INDEX CONCURRENTLY IF NOT EXISTS "${INDEX}" ON "OutboxMessage"("kind");\n`);
    const holder = await connect();
    const writer = await connect();
    const checker = await connect();
    // An instance's transaction is still open on the table: the build waits for it.
    await holder.query("BEGIN");
    await insertMessage(holder, "held-open");
    const migrating = applyMigrations(database.url, { root, lockTimeoutMs: 20_000 });
    await expect.poll(async () => (await checker.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query ILIKE '%CREATE INDEX CONCURRENTLY%' AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`)).rows[0].n, { timeout: 10_000 }).toBe(1);

    // Another instance's settlement stores its Shopify call meanwhile: not held off by the build.
    await writer.query("SET statement_timeout = 5000");
    await insertMessage(writer, "written-during-build");

    await holder.query("COMMIT");
    expect(await migrating).toEqual(["29990101000000_concurrent_kind_index"]);
    expect(await indexValid(checker)).toBe(true);
    expect(await applyMigrations(database.url, { root })).toEqual([]);
    expect((await checker.query(`SELECT count(*)::int AS n FROM "_prisma_migrations" WHERE migration_name = '29990101000000_concurrent_kind_index'`)).rows[0].n).toBe(1);
  }, 60_000);

  it("drops an index an interrupted build left invalid, and builds it again", async () => {
    const name = "29990102000000_unique_key_index";
    const unique = `${INDEX}_unique`;
    const client = await connect();
    // A build that failed half-way (here: duplicates, since removed) leaves an invalid index.
    await insertMessage(client, "duplicate-a");
    await client.query(`UPDATE "OutboxMessage" SET "payload" = 'same' WHERE "dedupeKey" IN ('duplicate-a', 'held-open')`);
    await expect(client.query(`CREATE UNIQUE INDEX CONCURRENTLY "${unique}" ON "OutboxMessage"("payload")`)).rejects.toThrow();
    await client.query(`UPDATE "OutboxMessage" SET "payload" = "id"`);
    const invalid = await client.query<{ valid: boolean }>(`SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1`, [unique]);
    expect(invalid.rows).toEqual([{ valid: false }]);

    const root = rootWith(name, `${NO_TRANSACTION_MARKER}\nCREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "${unique}" ON "OutboxMessage"("payload");\n`);
    expect(await applyMigrations(database.url, { root })).toContain(name);
    const rebuilt = await client.query<{ valid: boolean }>(`SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1`, [unique]);
    expect(rebuilt.rows).toEqual([{ valid: true }]);
  }, 60_000);

  it("refuses a migration outside a transaction that holds more than one statement", () => {
    const root = rootWith("29990103000000_two_statements", `${NO_TRANSACTION_MARKER}\nCREATE INDEX CONCURRENTLY "a" ON "OutboxMessage"("kind");\nCREATE INDEX CONCURRENTLY "b" ON "OutboxMessage"("status");\n`);
    expect(() => loadMigrations(join(root, "prisma/postgresql/migrations"))).toThrow("must hold exactly one statement");
  });
});
