// Opens the app's database: SQLite through libsql by default, PostgreSQL when the URL is
// postgresql://. Both generated clients have the same models; the rest of the app is typed
// against one of them (`Database`).
import { PrismaLibSQL } from "@prisma/adapter-libsql";
import { PrismaPg } from "@prisma/adapter-pg";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { PrismaClient as SqliteClient } from "../../generated/prisma/sqlite/client";
import { PrismaClient as PostgresClient } from "../../generated/prisma/postgresql/client";
import { databaseKind, sqliteFilePath } from "./database-url";

export type Database = SqliteClient;

export function openDatabase(url: string): Database {
  if (databaseKind(url) === "postgresql") {
    const client = new PostgresClient({ adapter: new PrismaPg({ connectionString: url, max: 10 }) });
    return client as unknown as Database;
  }
  const file = sqliteFilePath(url);
  if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
  // One connection per process: SQLite has one writer, and a deferred transaction on a
  // second connection fails at once (SQLITE_BUSY_SNAPSHOT) rather than waiting, so the
  // app's requests and workers queue on one connection instead. Another process (the dev
  // runner's tools) waits for the lock (busy timeout). Several app instances need PostgreSQL.
  const config = { url, timeout: 10_000, concurrency: 1 } as ConstructorParameters<typeof PrismaLibSQL>[0];
  return new SqliteClient({ adapter: new PrismaLibSQL(config) });
}
