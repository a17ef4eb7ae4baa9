// Another instance's migrator, as a test plays it: a session of the test's own holds the
// migrators' lock, and the test waits until the migrator under test asks for it.
import type pg from "pg";
import { MIGRATORS_LOCK } from "../../app/db/migrate.server";
import { waitFor } from "./stack";

/** The session takes the migrators' lock, as a migrator running on another instance holds it. */
export async function holdMigratorsLock(session: pg.Client): Promise<void> {
  await session.query("SELECT pg_advisory_lock($1)", [MIGRATORS_LOCK]);
}

export async function releaseMigratorsLock(session: pg.Client): Promise<void> {
  await session.query("SELECT pg_advisory_unlock($1)", [MIGRATORS_LOCK]);
}

/**
 * Waits until another session of the database asks for the migrators' lock: a migrator waiting
 * for the one the test plays (it asks again and again, never blocked on it: see takeMigratorLock).
 */
export async function migratorAskingForLock(session: pg.Client, what: string, timeoutMs?: number): Promise<void> {
  await waitFor(
    async () => {
      const { rows } = await session.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE $1", [
        `%pg_try_advisory_lock(${MIGRATORS_LOCK})%`,
      ]);
      return rows.length > 0;
    },
    what,
    timeoutMs,
  );
}
