// The committed migrations build exactly the database the Prisma schema describes, on both
// databases: a model or index added to prisma/schema.prisma without its migration (or a
// migration written for one database and not the other) fails here, not in production.
//
// SQLite: the migrated database is introspected (`prisma db pull`) and compared with the
// schema (`prisma migrate diff`, which must find no difference). PostgreSQL cannot be
// introspected through the driver adapter the offline schema engine needs, so its migrated
// database is compared with the SQLite one: the same tables, columns, nullability and indexes.
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { applyMigrations } from "../../app/db/migrate.server";
import { createTestPostgresDatabase } from "../support/postgres";

const run = promisify(execFile);
const prisma = (args: string[], databaseUrl: string) =>
  run(process.execPath, ["node_modules/prisma/build/index.js", ...args], { env: { ...process.env, DATABASE_URL: databaseUrl }, maxBuffer: 16 * 1024 * 1024 });

const dir = mkdtempSync(join(tmpdir(), "migrations-"));
const sqliteUrl = `file:${join(dir, "app.db")}`;
let postgres: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  postgres = await createTestPostgresDatabase();
  await Promise.all([applyMigrations(sqliteUrl), applyMigrations(postgres.url)]);
}, 60_000);

afterAll(() => postgres.drop());

it("the SQLite migrations build the database prisma/schema.prisma describes", async () => {
  const { stdout: pulled } = await prisma(["db", "pull", "--print"], sqliteUrl);
  const introspected = join(dir, "introspected.prisma");
  writeFileSync(introspected, pulled.slice(pulled.indexOf("generator client")));
  const diff = await prisma(["migrate", "diff", "--from-schema-datamodel", introspected, "--to-schema-datamodel", "prisma/schema.prisma", "--exit-code"], sqliteUrl).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: `${error.stdout}${error.stderr}` }),
  );
  expect(diff.stdout).toContain("No difference detected");
  expect(diff.code).toBe(0);
}, 60_000);

interface Shape {
  columns: string[];
  indexes: string[];
}

async function sqliteShape(): Promise<Shape> {
  const client = createClient({ url: sqliteUrl });
  try {
    const tables = (await client.execute(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_prisma_migrations'`)).rows.map((r) => String(r.name));
    const columns: string[] = [];
    const indexes: string[] = [];
    for (const table of tables) {
      for (const c of (await client.execute(`PRAGMA table_info("${table}")`)).rows) columns.push(`${table}.${String(c.name)} ${Number(c.notnull) || Number(c.pk) ? "NOT NULL" : "NULL"}`);
      for (const i of (await client.execute(`PRAGMA index_list("${table}")`)).rows) {
        if (String(i.origin) === "pk") continue;
        const names = (await client.execute(`PRAGMA index_info("${String(i.name)}")`)).rows.map((r) => String(r.name));
        indexes.push(`${table}(${names.join(", ")})${Number(i.unique) ? " UNIQUE" : ""}`);
      }
    }
    return { columns: columns.sort(), indexes: indexes.sort() };
  } finally {
    client.close();
  }
}

async function postgresShape(): Promise<Shape> {
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  try {
    const columns = await client.query<{ t: string; c: string; n: string }>(
      `SELECT table_name AS t, column_name AS c, is_nullable AS n FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`,
    );
    const indexes = await client.query<{ t: string; cols: string[]; u: boolean }>(`
      SELECT t.relname AS t, i.indisunique AS u,
             array(SELECT a.attname FROM unnest(i.indkey) WITH ORDINALITY k(attnum, n) JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS cols
      FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace s ON s.oid = t.relnamespace
      WHERE s.nspname = 'public' AND NOT i.indisprimary AND t.relname <> '_prisma_migrations'`);
    return {
      columns: columns.rows.map((r) => `${r.t}.${r.c} ${r.n === "YES" ? "NULL" : "NOT NULL"}`).sort(),
      indexes: indexes.rows.map((r) => `${r.t}(${r.cols.join(", ")})${r.u ? " UNIQUE" : ""}`).sort(),
    };
  } finally {
    await client.end();
  }
}

it("the PostgreSQL migrations build the same tables, columns and indexes as the SQLite ones", async () => {
  const [sqlite, postgresql] = await Promise.all([sqliteShape(), postgresShape()]);
  expect(sqlite.columns.length).toBeGreaterThan(50);
  expect(postgresql.columns).toEqual(sqlite.columns);
  expect(postgresql.indexes).toEqual(sqlite.indexes);
}, 60_000);
