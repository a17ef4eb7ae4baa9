// Opens the app's database: SQLite through libsql by default, PostgreSQL when the URL is
// postgresql://. Both generated clients have the same models; the rest of the app is typed
// against one of them (`Database`). Beside the client, the plain SQL of the hot paths
// (`PlainSql`), on the same connections.
import { PrismaLibSQL } from "@prisma/adapter-libsql";
import { PrismaPg } from "@prisma/adapter-pg";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import pg from "pg";
import { PrismaClient as SqliteClient } from "../../generated/prisma/sqlite/client";
import { PrismaClient as PostgresClient } from "../../generated/prisma/postgresql/client";
import { databaseKind, sqliteFilePath } from "./database-url";
import { plainSqlOnPool, plainSqlThroughClient, type PlainSql } from "./plain-sql.server";

export type Database = SqliteClient;

export interface AppDatabase {
  db: Database;
  sql: PlainSql;
}

export interface OpenOptions {
  /** PostgreSQL: the pool's connections at most (DATABASE_POOL_SIZE). */
  poolSize?: number;
}

/** The client and the plain SQL beside it: on PostgreSQL both use one pool (the client ends it on $disconnect). */
export function openAppDatabase(url: string, options: OpenOptions = {}): AppDatabase {
  if (databaseKind(url) === "postgresql") {
    const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 });
    // A pooled connection that breaks while idle (the server restarted) is dropped by the pool
    // and replaced on the next query; without a listener its error would end the process.
    pool.on("error", () => undefined);
    const client = new PostgresClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
    return { db: client as unknown as Database, sql: plainSqlOnPool(pool) };
  }
  const db = openSqlite(url);
  return { db, sql: plainSqlThroughClient(db, "sqlite") };
}

export function openDatabase(url: string, options: OpenOptions = {}): Database {
  return openAppDatabase(url, options).db;
}

function openSqlite(url: string): Database {
  const file = sqliteFilePath(url);
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  // One connection per process: SQLite has one writer, and a deferred transaction on a
  // second connection fails at once (SQLITE_BUSY_SNAPSHOT) rather than waiting, so the
  // app's requests and workers queue on one connection instead. Another process (the dev
  // runner's tools) waits for the lock (busy timeout). Several app instances need PostgreSQL.
  const config = { url, timeout: 10_000, concurrency: 1 } as ConstructorParameters<typeof PrismaLibSQL>[0];
  return new SqliteClient({ adapter: new PrismaLibSQL(config) });
}
