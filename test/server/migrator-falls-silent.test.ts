// The migrator's connection falls silent while it waits for another instance's migrator (the
// database's host froze, a network path started dropping packets): the start stops with a
// reason soon after, instead of waiting for ever for an answer that will never come, and closes
// its connection. Nothing is half-applied: the next start applies every migration.
import { expect, it } from "vitest";
import { applyMigrations, loadMigrations, migrationsDir } from "../../app/db/migrate.server";
import { databaseBehindFreezableProxy } from "../support/freezable-proxy";
import { holdMigratorsLock, migratorAskingForLock, releaseMigratorsLock } from "../support/migrators";
import { waitFor } from "../support/stack";

const behindProxy = databaseBehindFreezableProxy({ migrated: false });

it("a migrator whose connection falls silent stops with a reason after its query timeout, closes the connection, and leaves the migrations to the next start", async () => {
  const { database, proxy, proxiedUrl } = behindProxy();
  const otherMigrator = await database.connect();
  await holdMigratorsLock(otherMigrator);
  const queryTimeoutMs = 300;

  const migrating = applyMigrations(proxiedUrl, { queryTimeoutMs });
  const outcome = migrating.then(
    () => "applied",
    (error: unknown) => error,
  );
  await migratorAskingForLock(otherMigrator, "the migrator waiting for the lock");
  proxy.freeze();
  const frozenAt = Date.now();

  const error = await outcome;
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).message).toMatch(/PostgreSQL stopped answering the migrator: no answer within 300 ms/);
  expect(Date.now() - frozenAt).toBeLessThan(queryTimeoutMs + 5_000);
  await waitFor(async () => proxy.openConnections() === 0, "the migrator's connection closed");

  // No history was written; the next start, through a path that answers, applies them all.
  const { rows } = await otherMigrator.query<{ present: boolean }>(`SELECT to_regclass('"_prisma_migrations"') IS NOT NULL AS present`);
  const recorded = rows[0]!.present ? (await otherMigrator.query(`SELECT 1 FROM "_prisma_migrations"`)).rows.length : 0;
  expect(recorded).toBe(0);
  await releaseMigratorsLock(otherMigrator);
  const applied = await applyMigrations(database.url);
  expect(applied).toEqual(loadMigrations(migrationsDir(database.url)).map((m) => m.name));
  expect((await otherMigrator.query<{ n: number }>(`SELECT count(*)::int AS n FROM "_prisma_migrations"`)).rows[0]!.n).toBe(applied.length);
}, 60_000);
