// SQLite's query plans of the statements the app's Prisma client sends: a migrated database
// file with one shop ('s1'), a client that records every statement it sends, and the plan of one.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "@libsql/client";
import { PrismaLibSQL } from "@prisma/adapter-libsql";
import { applyMigrations } from "../../app/db/migrate.server";
import { PrismaClient } from "../../generated/prisma/sqlite/client";

export interface SentStatement {
  query: string;
  params: unknown[];
}

/** A new migrated SQLite database holding the shop 's1', opened raw (for inserts and plans). */
export async function planDatabase(prefix: string): Promise<{ url: string; raw: Client }> {
  const url = `file:${join(mkdtempSync(join(tmpdir(), prefix)), "app.db")}`;
  await applyMigrations(url);
  const raw = createClient({ url });
  await raw.execute(`INSERT INTO "Shop" ("id","shopDomain","webhookToken","createdAt","updatedAt") VALUES ('s1','a.myshopify.com','tok','2026-01-01T00:00:00.000+00:00','2026-01-01T00:00:00.000+00:00')`);
  return { url, raw };
}

/** The app's client on `url`, and the statements it sends as it sends them. */
export function recordingClient(url: string): { db: PrismaClient; statements: SentStatement[] } {
  const statements: SentStatement[] = [];
  const db = new PrismaClient({ adapter: new PrismaLibSQL({ url }), log: [{ emit: "event", level: "query" }] });
  db.$on("query", (event) => statements.push({ query: event.query, params: JSON.parse(event.params) as unknown[] }));
  return { db, statements };
}

/** SQLite's plan of a statement the client sent, one line a step. */
export async function planOf(raw: Client, statement: SentStatement): Promise<string> {
  const rows = (await raw.execute({ sql: `EXPLAIN QUERY PLAN ${statement.query}`, args: statement.params as never[] })).rows;
  return rows.map((row) => String(row.detail)).join("\n");
}
