// Applies the committed migrations (prisma/migrations for SQLite, prisma/postgresql/migrations
// for PostgreSQL) and records them in Prisma's own `_prisma_migrations` table, so the Prisma
// CLI sees the same history. Prisma's JS schema engine cannot migrate PostgreSQL through
// adapter-pg yet (prisma/orm#27403), which is why the app applies its migrations itself.
import { createHash, randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createClient } from "@libsql/client";
import pg from "pg";
import { CONNECT_TIMEOUT_MS, databaseKind, sqliteFilePath } from "./database-url";
import { destroyConnection, isQueryReadTimeout } from "./silent-connection";

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
  /**
   * False for a PostgreSQL migration marked NO_TRANSACTION_MARKER: one statement run outside a
   * transaction, as CREATE INDEX CONCURRENTLY must be.
   */
  transactional: boolean;
}

/**
 * A PostgreSQL migration's first line that runs it outside a transaction. An index on a table
 * that may be large is built so, CONCURRENTLY, in a migration of its own: a plain CREATE INDEX
 * holds off every write to the table for the whole build (a lock timeout only bounds the wait
 * for the lock), while the instances of the previous release are still serving. Written
 * `CREATE [UNIQUE] INDEX CONCURRENTLY IF NOT EXISTS "name" ...`: a build that failed half-way
 * leaves an invalid index, which the migrator drops before it tries again.
 */
export const NO_TRANSACTION_MARKER = "-- migrate: no-transaction";

/** The statements of a migration: its text without comment lines, cut at each semicolon. */
function statementsOf(sql: string): string[] {
  return sql
    .split("\n")
    .filter((line) => !line.trim().startsWith("--"))
    .join("\n")
    .split(";")
    .map((statement) => statement.trim())
    .filter((statement) => statement !== "");
}

export function migrationsDir(url: string, root = process.cwd()): string {
  return resolve(root, databaseKind(url) === "postgresql" ? "prisma/postgresql/migrations" : "prisma/migrations");
}

export function loadMigrations(dir: string): Migration[] {
  if (!existsSync(dir)) throw new Error(`No migrations folder at ${dir}`);
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, "migration.sql"), "utf8");
      const transactional = !sql.trimStart().startsWith(NO_TRANSACTION_MARKER);
      if (!transactional && statementsOf(sql).length !== 1) throw new Error(`Migration ${name} runs outside a transaction, so it must hold exactly one statement`);
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex"), transactional };
    });
}

const HISTORY_SQLITE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" TEXT PRIMARY KEY NOT NULL, "checksum" TEXT NOT NULL, "finished_at" DATETIME,
  "migration_name" TEXT NOT NULL, "logs" TEXT, "rolled_back_at" DATETIME,
  "started_at" DATETIME NOT NULL DEFAULT current_timestamp, "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0)`;
/** One history row per migration applied: what keeps two migrators from applying one twice. */
const HISTORY_SQLITE_APPLIED_ONCE = `CREATE UNIQUE INDEX IF NOT EXISTS "_prisma_migrations_applied_once" ON "_prisma_migrations" ("migration_name") WHERE "rolled_back_at" IS NULL`;
const HISTORY_POSTGRES = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL, "checksum" VARCHAR(64) NOT NULL, "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL, "logs" TEXT, "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(), "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`;

/** A text literal for SQLite: in single quotes, each quote doubled. */
function sqlText(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/**
 * How long a PostgreSQL migration's statement waits for a table's lock before the migration is
 * rolled back and tried again. While a statement such as ALTER TABLE waits behind a long
 * transaction, every later query of that table queues behind it, the gateway's webhooks and
 * Shopify's sessions included: the wait is kept well under their deadlines, and retried.
 */
export const MIGRATION_LOCK_TIMEOUT_MS = 2_000;
/** How many times a migration is tried while its locks cannot be had (about a minute in all). */
export const MIGRATION_LOCK_TRIES = 15;
/** How long a migrator waits for another instance's to finish before it gives up. */
const MIGRATOR_WAIT_MS = 5 * 60_000;
/**
 * How long the migrator waits for the answer to one of its own queries (its lock, its history,
 * a transaction's BEGIN and COMMIT) before it takes the connection as fallen silent (the
 * database's host froze, a network path drops packets) and stops the start with a reason. A
 * migration's own statements have no such limit: an index built on a large table may take
 * long, and lock_timeout bounds their waits for locks.
 */
export const MIGRATOR_QUERY_TIMEOUT_MS = 30_000;
/** The advisory lock every migrator takes first, so that one migrates at a time. */
export const MIGRATORS_LOCK = 7263541;
/** PostgreSQL's lock_not_available, what lock_timeout raises. */
const LOCK_NOT_AVAILABLE = "55P03";

export interface MigrateOptions {
  root?: string;
  lockTimeoutMs?: number;
  lockTries?: number;
  /** PostgreSQL: MIGRATOR_QUERY_TIMEOUT_MS unless given. */
  queryTimeoutMs?: number;
}

/** Applies every migration not applied yet; returns the names this call applied. Safe to run from several processes. */
export async function applyMigrations(url: string, options: MigrateOptions = {}): Promise<string[]> {
  const migrations = loadMigrations(migrationsDir(url, options.root));
  return databaseKind(url) === "postgresql" ? applyPostgres(url, migrations, options) : applySqlite(url, migrations);
}

function checkHistory(applied: Map<string, string>, migrations: Migration[]): Migration[] {
  for (const [name, checksum] of applied) {
    const local = migrations.find((m) => m.name === name);
    if (local && local.checksum !== checksum) {
      throw new Error(`Migration ${name} was changed after it was applied: add a new migration instead`);
    }
  }
  return migrations.filter((m) => !applied.has(m.name));
}

async function applySqlite(url: string, migrations: Migration[]): Promise<string[]> {
  const file = sqliteFilePath(url);
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  const client = createClient({ url });
  try {
    await client.execute("PRAGMA busy_timeout = 5000");
    // Write-ahead log: a commit appends to the log and syncs it once (synchronous stays FULL,
    // libsql's default, so a commit is durable), instead of writing, syncing and deleting a
    // rollback journal. The setting is kept in the file, for every connection and process.
    if (file !== ":memory:") await client.execute("PRAGMA journal_mode = WAL");
    await client.execute(HISTORY_SQLITE);
    // A history written before this index may hold a migration twice (two migrators raced):
    // then it cannot be made, and the history is taken as it is.
    await client.execute(HISTORY_SQLITE_APPLIED_ONCE).catch(() => undefined);
    const rows = await client.execute(`SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`);
    const applied = new Map(rows.rows.map((r) => [String(r.migration_name), String(r.checksum)]));
    const pending = checkHistory(applied, migrations);
    const appliedNow: string[] = [];
    for (const migration of pending) {
      // The migration and its history row in one write transaction: a crash leaves neither. The
      // row goes first: a migrator that applied it since this one read the history recorded it,
      // and the unique index then refuses this one's row before anything is applied twice.
      const record = `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count) VALUES (${sqlText(randomUUID())}, ${sqlText(migration.checksum)}, current_timestamp, ${sqlText(migration.name)}, 1);`;
      try {
        await client.executeMultiple(`BEGIN IMMEDIATE;\n${record}\n${migration.sql}\n;\nCOMMIT;`);
        appliedNow.push(migration.name);
      } catch (error) {
        // Another migrator, started at the same time, applied it since the history was read
        // (this one's transaction was rolled back): taken as applied, if it is the same one.
        const since = await client.execute({
          sql: `SELECT checksum FROM "_prisma_migrations" WHERE migration_name = ? AND finished_at IS NOT NULL AND rolled_back_at IS NULL`,
          args: [migration.name],
        });
        if (since.rows.length === 0) throw error;
        checkHistory(new Map([[migration.name, String(since.rows[0]!.checksum)]]), [migration]);
      }
    }
    return appliedNow;
  } finally {
    client.close();
  }
}

async function applyPostgres(url: string, migrations: Migration[], options: MigrateOptions): Promise<string[]> {
  const lockTimeoutMs = options.lockTimeoutMs ?? MIGRATION_LOCK_TIMEOUT_MS;
  const lockTries = options.lockTries ?? MIGRATION_LOCK_TRIES;
  // Opening the connection gives up as the app's pool does: a server that takes connections and
  // never answers stops the start with a reason instead of holding it, silent, for ever.
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  const queryTimeoutMs = options.queryTimeoutMs ?? MIGRATOR_QUERY_TIMEOUT_MS;
  const ask: Ask = (text, values) => client.query({ text, values, query_timeout: queryTimeoutMs } as pg.QueryConfig);
  let silent = false;
  await client.connect();
  try {
    // One migrator at a time across every instance that starts together; one that waits longer
    // than another's migrations could take (each takes its locks within about a minute) stops.
    await takeMigratorLock(ask);
    await ask(HISTORY_POSTGRES);
    const rows = await ask<{ migration_name: string; checksum: string }>(`SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`);
    const applied = new Map<string, string>(rows.rows.map((r) => [r.migration_name, r.checksum]));
    const pending = checkHistory(applied, migrations);
    const lockTimeout = `${Math.max(1, Math.round(lockTimeoutMs))}`;
    const record = (migration: Migration) =>
      ask(`INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count) VALUES ($1, $2, now(), $3, 1)`, [
        randomUUID(),
        migration.checksum,
        migration.name,
      ]);
    for (const migration of pending) {
      for (let attempt = 1; ; attempt++) {
        try {
          if (migration.transactional) {
            await ask("BEGIN");
            try {
              await ask(`SET LOCAL lock_timeout = ${lockTimeout}`);
              await client.query(migration.sql);
              await record(migration);
              await ask("COMMIT");
            } catch (error) {
              await ask("ROLLBACK");
              throw error;
            }
          } else {
            // Outside a transaction: the statement, then its history row. Stopped between the
            // two, the next start runs it again, which IF NOT EXISTS makes harmless.
            await ask(`SET lock_timeout = ${lockTimeout}`);
            try {
              await dropInvalidIndexes(client, ask, migration.sql);
              await client.query(migration.sql);
            } finally {
              await ask("RESET lock_timeout");
            }
            await record(migration);
          }
          break;
        } catch (error) {
          if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw error;
          if (attempt >= lockTries) {
            throw new Error(`Migration ${migration.name} could not take its locks in ${lockTries} tries of ${lockTimeoutMs} ms: a long transaction holds a table it changes`, { cause: error });
          }
          // The queries that queued behind it go through meanwhile.
          await new Promise((resolve) => setTimeout(resolve, lockTimeoutMs));
        }
      }
    }
    return pending.map((m) => m.name);
  } catch (error) {
    if (!isQueryReadTimeout(error)) throw error;
    silent = true;
    throw new Error(`PostgreSQL stopped answering the migrator: no answer within ${queryTimeoutMs} ms. Check the database server and the network path to it, then start again`, { cause: error });
  } finally {
    if (silent) {
      // Its answers will never come: the connection is closed, which also gives up its session's
      // locks. The client's error for the closing has been said already.
      client.on("error", () => undefined);
      destroyConnection(client);
    } else {
      await ask("SELECT pg_advisory_unlock($1)", [MIGRATORS_LOCK]).catch(() => undefined);
      await client.end();
    }
  }
}

/** A query of the migrator's own, answered within its query timeout. */
type Ask = <R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>;

/** How often a migrator waiting for another instance's asks for the lock again. */
const MIGRATOR_POLL_MS = 250;

/**
 * Takes the migrators' advisory lock, waiting at most MIGRATOR_WAIT_MS for another instance's
 * migrator to finish. The wait is a series of short tries, never one statement blocked on the
 * lock: a statement holds a snapshot while it waits, and the other migrator's CREATE INDEX
 * CONCURRENTLY waits for every older snapshot to end, which would be a deadlock (PostgreSQL
 * cancels one of the two, and that instance's start fails).
 */
async function takeMigratorLock(ask: Ask): Promise<void> {
  const giveUpAt = Date.now() + MIGRATOR_WAIT_MS;
  for (;;) {
    const { rows } = await ask<{ locked: boolean }>(`SELECT pg_try_advisory_lock(${MIGRATORS_LOCK}) AS locked`);
    if (rows[0]?.locked) return;
    if (Date.now() >= giveUpAt) throw new Error(`Another instance's migrator held the migrations for more than ${MIGRATOR_WAIT_MS / 1000} s: it may be stuck; try again`);
    await new Promise((resolve) => setTimeout(resolve, MIGRATOR_POLL_MS));
  }
}

/**
 * Drops the indexes a migration builds CONCURRENTLY that an earlier, interrupted build left
 * invalid (PostgreSQL keeps them, and IF NOT EXISTS would then skip the build for good).
 */
async function dropInvalidIndexes(client: pg.Client, ask: Ask, sql: string): Promise<void> {
  const names = [...sql.matchAll(/CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+(?:IF\s+NOT\s+EXISTS\s+)?"([^"]+)"/gi)].map((match) => match[1]!);
  if (names.length === 0) return;
  const invalid = await ask<{ name: string }>(
    `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE NOT i.indisvalid AND c.relname = ANY($1::text[]) AND pg_table_is_visible(c.oid)`,
    [names],
  );
  for (const { name } of invalid.rows) await client.query(`DROP INDEX CONCURRENTLY IF EXISTS "${name.replaceAll('"', '""')}"`);
}
