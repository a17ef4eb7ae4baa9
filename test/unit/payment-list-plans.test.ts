// The payments list's pages and the CSV export's batches start at their cursor on the
// (shopId, createdAt) index: the statements the Prisma client sends for a page past the first,
// in each direction, are checked on SQLite's plan. A condition on the cursor written as an OR
// alone was read from the shop's newest payment on, so each of an export's batches walked past
// every row already sent.
import { expect, it } from "vitest";
import { listPayments } from "../../app/admin/payments.server";
import { paymentsCsv } from "../../app/admin/payments-export.server";
import { parsePageCursor } from "../../app/admin/payment-filters";
import { planDatabase, planOf, recordingClient } from "../support/sqlite-plans";

it("SQLite: a page or export batch past the cursor is searched on the (shopId, createdAt) index from the cursor on", async () => {
  const { url, raw } = await planDatabase("payment-list-plans-");
  await raw.execute(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120)
    INSERT INTO "Payment" ("id","shopId","shopifyPaymentId","gid","groupId","amount","currency","test","kind","cancelUrl","gatewayEnv","state","createdAt","updatedAt")
    SELECT printf('p%03d', i), 's1', 'sp' || i, 'gid://shopify/PaymentSession/' || i, 'g' || i, '10.00', 'EUR', 1, 'sale', 'https://a.example/cancel', 'sandbox', 'pending',
      strftime('%Y-%m-%dT%H:%M:%S.000+00:00', '2026-01-01', '+' || (i / 2) || ' minutes'), '2026-01-01T00:00:00.000+00:00' FROM n`);

  const { db, statements } = recordingClient(url);

  // The export, in batches of 50: its second and third batches read past a cursor.
  const reader = paymentsCsv(db, "s1", {}, 50).getReader();
  let rows = 0;
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rows += new TextDecoder().decode(chunk.value).split("\n").length - 1;
  expect(rows).toBe(121);
  // The list: the second page, then back to the first from it (each page also counts the newer payments).
  const first = await listPayments(db, "s1", {});
  expect(first.olderCursor).not.toBeNull();
  const second = await listPayments(db, "s1", {}, parsePageCursor(new URLSearchParams({ after: first.olderCursor! })));
  expect(second.newerCursor).not.toBeNull();
  const back = await listPayments(db, "s1", {}, parsePageCursor(new URLSearchParams({ before: second.newerCursor! })));
  expect(back.rows.map((r) => r.id)).toEqual(first.rows.map((r) => r.id));
  await db.$disconnect();

  const pastCursor = statements.filter((s) => s.query.includes("`Payment`") && /`createdAt` [<>]/.test(s.query));
  expect(pastCursor.length).toBeGreaterThanOrEqual(5);
  for (const statement of pastCursor) {
    const plan = await planOf(raw, statement);
    expect(plan, statement.query).toMatch(/USING INDEX Payment_shopId_createdAt_idx \(shopId=\? AND createdAt[<>]\?\)/);
  }
  raw.close();
}, 60_000);

it("SQLite: a page's signed notifications since the orders' last reads are found on the (shopId, orderId) index, not by walking the shop's", async () => {
  const { url, raw } = await planDatabase("payment-list-notified-plans-");
  await raw.execute(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60)
    INSERT INTO "Payment" ("id","shopId","shopifyPaymentId","gid","groupId","amount","currency","test","kind","cancelUrl","gatewayEnv","gatewayOrderId","gatewayStatus","state","createdAt","updatedAt")
    SELECT printf('p%03d', i), 's1', 'sp' || i, 'gid://shopify/PaymentSession/' || i, 'g' || i, '10.00', 'EUR', 1, 'sale', 'https://a.example/cancel', 'sandbox', 'o' || i, 'NR', 'awaiting_payment',
      strftime('%Y-%m-%dT%H:%M:%S.000+00:00', '2026-01-01', '+' || i || ' minutes'), '2026-01-01T00:00:00.000+00:00' FROM n`);
  // Each order's PE then AC, received after its payment was created; the newest payment's AC came first.
  await raw.execute(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60), s(code, after) AS (VALUES ('PE', 1), ('AC', 2))
    INSERT INTO "GatewayWebhook" ("id","shopId","gatewayEnv","nonce","signature","rawBody","orderId","status","receivedAt","nextAttemptAt")
    SELECT 'w' || i || code, 's1', 'sandbox', 'n', 'sig' || i || code, '{}', 'o' || i, code,
      strftime('%Y-%m-%dT%H:%M:%S.000+00:00', '2026-01-01', '+' || (i + after) || ' minutes'), '2026-01-01T00:00:00.000+00:00' FROM n, s`);

  const { db, statements } = recordingClient(url);
  const page = await listPayments(db, "s1", {});
  await db.$disconnect();
  expect(page.rows).toHaveLength(25);
  expect(new Set(page.rows.map((r) => r.notifiedStatus))).toEqual(new Set(["Awaiting Completion (AC)"]));

  const notifications = statements.filter((s) => s.query.includes("`GatewayWebhook`"));
  expect(notifications).toHaveLength(1);
  expect(await planOf(raw, notifications[0]!)).toMatch(/USING INDEX GatewayWebhook_shopId_orderId_idx \(shopId=\? AND orderId=\?\)/);
  raw.close();
}, 60_000);
