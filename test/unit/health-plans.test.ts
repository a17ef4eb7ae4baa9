// The health page's last notification of a shop is read from the newest of its webhooks, not
// from every one it keeps (up to RETENTION_DAYS of them): checked on the SQLite plan of the
// very statement the Prisma client sends, over 20,000 stored webhooks.
import { expect, it } from "vitest";
import { planDatabase, planOf, recordingClient } from "../support/sqlite-plans";

it("SQLite: a shop's last webhook is read through the (shopId, receivedAt) index", async () => {
  const { url, raw } = await planDatabase("health-plans-");
  await raw.execute(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
    INSERT INTO "GatewayWebhook" ("id","shopId","gatewayEnv","nonce","signature","rawBody","orderId","status","receivedAt","processedAt","nextAttemptAt")
    SELECT 'w' || i, 's1', 'live', 'n', 'sig' || i, '{}', 'o' || (i / 3), 'PE', '2026-01-01T00:00:00.000+00:00', '2026-01-01T00:00:00.000+00:00', '2026-01-01T00:00:00.000+00:00' FROM n`);

  const { db, statements } = recordingClient(url);
  // The statement shopHealth (app/admin/health.server.ts) sends.
  const last = await db.gatewayWebhook.aggregate({ where: { shopId: "s1" }, _max: { receivedAt: true } });
  await db.$disconnect();
  expect(last._max.receivedAt).not.toBeNull();
  const plan = await planOf(raw, statements.find((s) => s.query.includes("`GatewayWebhook`"))!);
  raw.close();
  expect(plan).toMatch(/GatewayWebhook_shopId_receivedAt_idx/);
}, 60_000);
