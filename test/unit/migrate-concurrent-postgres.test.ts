// Two instances started at once on PostgreSQL (a rolling deploy, a scaled-out service): both
// must start. The second waits on the migrator's advisory lock while the first applies the
// migrations, among them an index built CONCURRENTLY, which waits for every transaction whose
// snapshot is older than its build, the second migrator's wait for the lock included.
import { afterEach, expect, it } from "vitest";
import { applyMigrations } from "../../app/db/migrate.server";
import { createTestPostgresDatabase, type TestPostgresDatabase } from "../support/postgres";

let db: TestPostgresDatabase | undefined;
afterEach(async () => {
  await db?.drop();
  db = undefined;
});

it("two migrators started together on a fresh PostgreSQL database both succeed", async () => {
  db = await createTestPostgresDatabase();
  const results = await Promise.allSettled([applyMigrations(db.url), applyMigrations(db.url)]);
  const failures = results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason));
  expect(failures).toEqual([]);
  const applied = results.flatMap((r) => (r.status === "fulfilled" ? r.value : []));
  expect(new Set(applied).size).toBe(applied.length);
  expect(await applyMigrations(db.url)).toEqual([]);
  // No index left invalid by a build that was cancelled.
  const client = await db.connect();
  const invalid = await client.query(`SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE NOT i.indisvalid`);
  expect(invalid.rows).toEqual([]);
}, 120_000);
