// The health page's last notification of a shop is read from the newest of its webhooks, not
// from every one it keeps (up to RETENTION_DAYS of them): checked on the SQLite plan of the
// very statement the Prisma client sends, over 20,000 stored webhooks.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { PrismaLibSQL } from "@prisma/adapter-libsql";
import { expect, it } from "vitest";
import { applyMigrations } from "../../app/db/migrate.server";
import { PrismaClient } from "../../generated/prisma/sqlite/client";

it("SQLite: a shop's last webhook is read through the (shopId, receivedAt) index", async () => {
  const url = `file:${join(mkdtempSync(join(tmpdir(), "health-plans-")), "app.db")}`;
  await applyMigrations(url);
  const raw = createClient({ url });
  await raw.execute(`INSERT INTO "Shop" ("id","shopDomain","webhookToken","createdAt","updatedAt") VALUES ('s1','a.myshopify.com','tok','2026-01-01T00:00:00.000+00:00','2026-01-01T00:00:00.000+00:00')`);
  await raw.execute(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
    INSERT INTO "GatewayWebhook" ("id","shopId","gatewayEnv","nonce","signature","rawBody","orderId","status","receivedAt","processedAt","nextAttemptAt")
    SELECT 'w' || i, 's1', 'live', 'n', 'sig' || i, '{}', 'o' || (i / 3), 'PE', '2026-01-01T00:00:00.000+00:00', '2026-01-01T00:00:00.000+00:00', '2026-01-01T00:00:00.000+00:00' FROM n`);

  const statements: { query: string; params: unknown[] }[] = [];
  const db = new PrismaClient({ adapter: new PrismaLibSQL({ url }), log: [{ emit: "event", level: "query" }] });
  db.$on("query", (event) => statements.push({ query: event.query, params: JSON.parse(event.params) as unknown[] }));
  // The statement shopHealth (app/admin/health.server.ts) sends.
  const last = await db.gatewayWebhook.aggregate({ where: { shopId: "s1" }, _max: { receivedAt: true } });
  await db.$disconnect();
  expect(last._max.receivedAt).not.toBeNull();
  const statement = statements.find((s) => s.query.includes("`GatewayWebhook`"))!;
  const plan = (await raw.execute({ sql: `EXPLAIN QUERY PLAN ${statement.query}`, args: statement.params as never[] })).rows.map((row) => String(row.detail));
  raw.close();
  expect(plan.join("\n")).toMatch(/GatewayWebhook_shopId_receivedAt_idx/);
}, 60_000);
