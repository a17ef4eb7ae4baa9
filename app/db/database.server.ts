// Opens the app's database: SQLite through libsql by default, PostgreSQL when the URL is
// postgresql://. Both generated clients have the same models; the rest of the app is typed
// against one of them (`Database`). Beside the client, the plain SQL of the hot paths
// (`PlainSql`), on the same connections.
import { createClient as createLibsqlClient } from "@libsql/client";
import { PrismaLibSQL } from "@prisma/adapter-libsql";
import { PrismaPg } from "@prisma/adapter-pg";
import type { SqlDriverAdapter } from "@prisma/driver-adapter-utils";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import pg from "pg";
import { PrismaClient as SqliteClient } from "../../generated/prisma/sqlite/client";
import { PrismaClient as PostgresClient } from "../../generated/prisma/postgresql/client";
import { CONNECT_TIMEOUT_MS, DEFAULT_STATEMENT_TIMEOUT_MS, databaseKind, sqliteFilePath } from "./database-url";
import { plainSqlOnAdapter, plainSqlOnPool, type PlainSql } from "./plain-sql.server";
import { destroyConnection, isQueryReadTimeout } from "./silent-connection";

export type Database = SqliteClient;

export interface AppDatabase {
  db: Database;
  sql: PlainSql;
}

export interface OpenOptions {
  /** PostgreSQL: the pool's connections at most (DATABASE_POOL_SIZE). */
  poolSize?: number;
  /** PostgreSQL: how long one statement may run, lock waits included (DATABASE_STATEMENT_TIMEOUT_MS). */
  statementTimeoutMs?: number;
}

/**
 * PostgreSQL: how long a connection may sit in an open transaction between statements before
 * the server ends the session. The app's transactions run their statements back to back (an
 * interactive Prisma transaction is given up after 5 s); one left open by a process that
 * stopped turning its event loop would otherwise hold its row locks for ever.
 */
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;

/**
 * PostgreSQL: how long past the statement timeout the client waits for a query's answer. The
 * server ends a statement at its timeout and answers at once; a connection that has not
 * answered by then has fallen silent (the server's host froze, a network path drops packets),
 * and the server's timeout cannot reach the client. The query then fails here and its
 * connection is dropped (dropSilentConnections).
 */
export const QUERY_ANSWER_MARGIN_MS = 3_000;

/** The client and the plain SQL beside it: on PostgreSQL both use one pool (the client ends it on $disconnect). */
export function openAppDatabase(url: string, options: OpenOptions = {}): AppDatabase {
  if (databaseKind(url) === "postgresql") {
    // A database that takes connections but never answers (overloaded, a network path that
    // drops packets) fails a query after CONNECT_TIMEOUT_MS instead of holding it for ever. A
    // statement that waits on a row lock another session keeps, or runs away, is cancelled
    // by the server after the statement timeout: the request or worker pass holding it fails
    // and its connection goes back to the pool, where it would otherwise wait for ever.
    const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
    const pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      statement_timeout: statementTimeoutMs,
      query_timeout: statementTimeoutMs + QUERY_ANSWER_MARGIN_MS,
      idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_TIMEOUT_MS,
    });
    // A pooled connection that breaks while idle (the server restarted) is dropped by the pool
    // and replaced on the next query; without a listener its error would end the process.
    pool.on("error", () => undefined);
    releaseBrokenConnections(pool);
    dropSilentConnections(pool);
    const client = new PostgresClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
    return { db: client as unknown as Database, sql: plainSqlOnPool(pool) };
  }
  const adapter = sqliteAdapter(url);
  const db = new SqliteClient({ adapter });
  return { db, sql: plainSqlOnAdapter(() => adapter.connect(), "sqlite") };
}

/**
 * A connection that ends while a statement or transaction holds it (the server restarts or
 * fails over, the session is ended) leaves the pool at once, and its error is listened for.
 * - Its error, emitted on a connection nobody listens to (the plain SQL's transactions), would
 *   end the process.
 * - Prisma's adapter never gives back a transaction's connection whose ROLLBACK failed, so
 *   each such connection stayed counted as in use, and the pool ran out for good after as
 *   many as it holds (test/server/database-connection-lost.test.ts).
 * The connection is given back as broken, which drops it, and whoever held it finds its own
 * give-back done: its statements already failed, and the next query gets a new connection.
 */
function releaseBrokenConnections(pool: pg.Pool): void {
  const inUse = new WeakSet<pg.PoolClient>();
  pool.on("acquire", (client) => inUse.add(client));
  pool.on("release", (_error, client) => inUse.delete(client as pg.PoolClient));
  pool.on("connect", (client) => {
    client.on("error", (error) => {
      const held = client as pg.PoolClient;
      if (!inUse.has(held)) return; // idle: the pool drops it itself
      const giveBack = held.release;
      held.release = () => undefined;
      giveBack.call(held, error);
    });
  });
}

/**
 * A query that got no answer within the client's time limit (QUERY_ANSWER_MARGIN_MS past the
 * statement timeout) fails, and pg then takes the connection as free again, though the answer
 * it waits for may never come: every later query on it would queue behind that answer.
 * - A query through the pool itself (`pool.query`, with a callback) gives its connection back
 *   with its error, and the pool drops it.
 * - A query on a connection taken from the pool (a transaction's, awaited) would leave it
 *   checked out behind that answer, its rollback too: the connection is closed instead, and
 *   its error takes it out of the pool (releaseBrokenConnections).
 * The next query opens a new connection.
 */
function dropSilentConnections(pool: pg.Pool): void {
  pool.on("connect", (client) => {
    const query = client.query as (...args: unknown[]) => unknown;
    const close = (error: unknown) => {
      if (isQueryReadTimeout(error)) destroyConnection(client);
    };
    client.query = function (this: pg.PoolClient, ...args: unknown[]) {
      const result = query.apply(this, args);
      if (result instanceof Promise) result.catch(close);
      return result;
    } as typeof client.query;
  });
}

/** The app's database as its settings describe it: DATABASE_URL, with the pool's size and statement timeout on PostgreSQL. */
export function openConfiguredDatabase(settings: { DATABASE_URL: string; DATABASE_POOL_SIZE: number; DATABASE_STATEMENT_TIMEOUT_MS: number }): AppDatabase {
  return openAppDatabase(settings.DATABASE_URL, { poolSize: settings.DATABASE_POOL_SIZE, statementTimeoutMs: settings.DATABASE_STATEMENT_TIMEOUT_MS });
}

export function openDatabase(url: string): Database {
  return openAppDatabase(url).db;
}

function sqliteAdapter(url: string): YieldingLibSQL {
  const file = sqliteFilePath(url);
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  // One connection per process: SQLite has one writer, and libsql waits for its lock on the
  // event loop's thread, so a second connection of the same process waiting for a transaction
  // of the first (which needs turns of that thread to end) would hold the thread until its busy
  // timeout. The app's requests and workers queue on one connection instead, behind the
  // adapter's lock. Another process (the dev runner's tools) waits for the lock (busy timeout).
  // Several app instances need PostgreSQL.
  const config = { url, timeout: 10_000, concurrency: 1 } as ConstructorParameters<typeof PrismaLibSQL>[0];
  return new YieldingLibSQL(config);
}

type LibsqlClient = ReturnType<PrismaLibSQL["createClient"]>;
type LibsqlTransaction = Awaited<ReturnType<LibsqlClient["transaction"]>>;

/**
 * The Prisma adapter on SQLite, with two changes to the libsql client it drives:
 * - It is the app's own @libsql/client, whose connection pool (one connection here) takes a
 *   transaction's connection back when the transaction ends. The client bundled with the
 *   adapter leaves that connection open for the garbage collector and opens another; with
 *   turns of the event loop between statements, as a server has, statements then failed now
 *   and then with "disk I/O error" (SQLITE_IOERR_SHORT_READ), in 9 of 120 runs of the chain in
 *   test/unit/sqlite-event-loop.test.ts and in none with this client. Its interface is the
 *   same, in a newer version.
 * - Every statement first lets the event loop take one turn. libsql runs a statement on a
 *   local file synchronously and hands back a settled promise, and the adapter's lock hands
 *   the connection to the next waiting statement in the same microtask: statements queued by
 *   a worker settling a batch ran back to back for up to half a second while requests waited
 *   in the socket's queue (BENCHMARKS.md). A network driver yields there by nature.
 * - A transaction takes the write lock as it begins (BEGIN IMMEDIATE, libsql's "write" mode)
 *   where the adapter asks for a deferred one, which takes it at its first write. A deferred
 *   transaction that read first keeps the snapshot of its first read, and when another process
 *   (a maintenance script) commits before its first write, that write fails at once
 *   (SQLITE_BUSY_SNAPSHOT) instead of waiting. The plain SQL's group commit makes this matter:
 *   a batch may open with a write that only reads, and the writes after it are other callers'.
 */
class YieldingLibSQL extends PrismaLibSQL {
  // One adapter (one connection and its lock) for the Prisma client and the plain SQL beside it,
  // until the client disconnects and disposes of it.
  #connected: Promise<SqlDriverAdapter> | null = null;

  override connect(): Promise<SqlDriverAdapter> {
    this.#connected ??= super.connect().then((adapter) => {
      const dispose = adapter.dispose.bind(adapter);
      adapter.dispose = () => {
        this.#connected = null;
        return dispose();
      };
      return adapter;
    });
    return this.#connected;
  }

  override createClient(config: Parameters<PrismaLibSQL["createClient"]>[0]): LibsqlClient {
    return yieldingBeforeEachStatement(createLibsqlClient(config) as unknown as LibsqlClient);
  }
}

type AnyFunction = (...args: unknown[]) => unknown;

function yieldingBeforeEachStatement<T extends LibsqlClient | LibsqlTransaction>(target: T): T {
  return new Proxy(target, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== "function") return value;
      const method = value as AnyFunction;
      if (property === "execute" || property === "batch" || property === "executeMultiple") {
        return async (...args: unknown[]) => {
          await nextTurn();
          return method.apply(object, args);
        };
      }
      if (property === "transaction") {
        return async (mode?: unknown, ...rest: unknown[]) =>
          yieldingBeforeEachStatement((await method.apply(object, [mode === "deferred" ? "write" : mode, ...rest])) as LibsqlTransaction);
      }
      return method.bind(object);
    },
  });
}
