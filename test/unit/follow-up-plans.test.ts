// A capture's or void's decision looks for the payment's earlier captures and voids, on the
// (shopId, paymentShopifyId, kind) index: checked on SQLite's plan of the statements the
// decision sends, in a shop with many requests. Without it each decision read every capture
// (or void) of the shop, with the payment's row locked meanwhile.
import { expect, it } from "vitest";
import { receiveFollowUpSession } from "../../app/payments/follow-up-sessions";
import type { PaymentsDeps } from "../../app/payments/deps";
import { planDatabase, planOf, recordingClient } from "../support/sqlite-plans";

it("SQLite: a void's look for the payment's captures searches the payment's own requests, not the shop's", async () => {
  const { url, raw } = await planDatabase("follow-up-plans-");
  await raw.execute(`INSERT INTO "Payment" ("id","shopId","shopifyPaymentId","gid","groupId","amount","currency","test","kind","cancelUrl","gatewayEnv","state","createdAt","updatedAt")
    VALUES ('p1','s1','sp1','gid://shopify/PaymentSession/sp1','g1','49.90','EUR',1,'authorization','https://a.example/cancel','sandbox','pending','2026-01-01T00:00:00.000+00:00','2026-01-01T00:00:00.000+00:00')`);
  await raw.execute(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
    INSERT INTO "SessionRequest" ("id","shopId","kind","shopifyId","gid","paymentShopifyId","amount","currency","test","status","createdAt","updatedAt")
    SELECT 'r' || i, 's1', CASE i % 2 WHEN 0 THEN 'capture' ELSE 'void' END, 'sr' || i, 'gid://shopify/x/' || i, 'other' || i, '1.00', 'EUR', 1, 'resolved',
      '2026-01-01T00:00:00.000+00:00', '2026-01-01T00:00:00.000+00:00' FROM n`);

  const { db, statements } = recordingClient(url);
  const deps = { db, clock: { now: () => new Date("2026-01-02T00:00:00Z") }, notify: { outbox: () => undefined }, logger: { info() {}, warn() {}, error() {}, debug() {} } } as unknown as PaymentsDeps;
  const answer = await receiveFollowUpSession(deps, {
    kind: "void",
    shopDomain: "a.myshopify.com",
    request: { id: "v1", gid: "gid://shopify/PaymentSessionVoid/v1", payment_id: "sp1", test: true },
  });
  expect(answer.status).toBe(201);
  await db.$disconnect();

  const lookups = statements.filter((s) => s.query.includes("`SessionRequest`") && s.query.startsWith("SELECT") && s.query.includes("`paymentShopifyId`"));
  expect(lookups.length).toBeGreaterThanOrEqual(1);
  for (const statement of lookups) {
    expect(await planOf(raw, statement), statement.query).toMatch(/USING INDEX SessionRequest_shopId_paymentShopifyId_kind_idx \(shopId=\? AND paymentShopifyId=\? AND kind=\?\)/);
  }
  raw.close();
}, 60_000);
