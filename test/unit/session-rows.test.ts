// The payment session's two plain-SQL writes, on SQLite and PostgreSQL: what they store reads
// back through the models exactly as a model write would have stored it, each write is
// atomic with its event, and concurrent duplicates record one payment.
import { beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../generated/prisma/sqlite/client";
import type { Database } from "../../app/db/database.server";
import type { PlainSql } from "../../app/db/plain-sql.server";
import { insertSessionPayment, newRowId, storeSessionAnswer, type NewSessionPayment } from "../../app/payments/session-rows.server";
import { readSessionShop, shopRowUnchanged, type SessionShop } from "../../app/shops/shop-rows.server";
import { ROW_DATABASES, rowsDatabaseForFile } from "../support/row-databases";

const T0 = new Date("2026-11-22T10:00:00.123Z");

describe.each(ROW_DATABASES)("on $name", (database) => {
  let db: Database;
  let sql: PlainSql;
  let shopId: string;
  let serial = 0;

  const row = (overrides: Partial<NewSessionPayment> = {}): NewSessionPayment => ({
    shopId,
    shopifyPaymentId: `payment-${++serial}`,
    gid: `gid://shopify/PaymentSession/${serial}`,
    groupId: `group-${serial}`,
    amount: "49.90",
    currency: "EUR",
    test: true,
    kind: "sale",
    cancelUrl: "https://shop.example/cancel",
    merchantLocale: "es-ES",
    gatewayEnv: "sandbox",
    state: "started",
    createdAt: T0,
    sessionClaimUntil: new Date(T0.getTime() + 90_000),
    sessionClaimToken: `claim-${serial}`,
    orderRequestedAt: T0,
    customerEmail: "ana@example.com",
    customerName: "Ana Pérez",
    customerPhone: null,
    billingAddress: JSON.stringify({ given_name: "Ana", country_code: "ES" }),
    lastCheckedAt: T0,
    ...overrides,
  });
  const received = { type: "session_received", detail: '{"amount":"49.90"}', at: T0 };

  const rows = rowsDatabaseForFile(database, { shopDomain: "rows.myshopify.com", webhookToken: "rows-webhook-token-0001" });
  beforeAll(() => void ({ db, sql, shopId } = rows()));

  it("records a payment with its first event, read back through the model as written", async () => {
    const values = row({ test: false, customerPhone: "+34600000000", orderRequestedAt: null });
    const created = await insertSessionPayment(sql, values, received);
    expect(created?.id).toMatch(/^[a-z0-9]{26}$/);
    const stored = await db.payment.findUniqueOrThrow({ where: { id: created!.id }, include: { events: true } });
    expect(stored).toMatchObject({ ...values, gatewayOrderId: null, responseStatus: null });
    // The wall clock, as the model's @updatedAt would have set it.
    expect(Math.abs(stored.updatedAt.getTime() - Date.now())).toBeLessThan(60_000);
    expect(stored.events).toEqual([{ id: expect.any(String), paymentId: created!.id, ...received }]);
  });

  it("records nothing for a Shopify id the shop already has, even when the requests arrive together", async () => {
    const first = row();
    const duplicate = { ...first, amount: "1.00" };
    const results = await Promise.all([insertSessionPayment(sql, first, received), ...Array.from({ length: 5 }, () => insertSessionPayment(sql, duplicate, received))]);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    const stored = await db.payment.findMany({ where: { shopId, shopifyPaymentId: first.shopifyPaymentId }, include: { events: true } });
    expect(stored).toHaveLength(1);
    expect(stored[0]!.events).toHaveLength(1);
  });

  it("stores the answer with its event and releases the claim; events sort in the order written", async () => {
    const values = row();
    const created = await insertSessionPayment(sql, values, received);
    const expiresAt = new Date(T0.getTime() + 900_000);
    const stored = await storeSessionAnswer(
      sql,
      { id: created!.id, claimToken: values.sessionClaimToken! },
      { state: "awaiting_payment", responseStatus: 200, responseBody: '{"redirect_url":"https://pay.example/x"}', columns: { gatewayOrderId: "order-1", gatewayStatus: "PE", cryptoAmount: "0.00123", tagMemo: null, expiresAt } },
      { type: "order_created", detail: '{"status":200}', at: T0 },
    );
    expect(stored).toBe(true);
    const read = await db.payment.findUniqueOrThrow({ where: { id: created!.id }, include: { events: { orderBy: [{ at: "asc" }, { id: "asc" }] } } });
    expect(read).toMatchObject({
      state: "awaiting_payment",
      responseStatus: 200,
      responseBody: '{"redirect_url":"https://pay.example/x"}',
      sessionClaimUntil: null,
      sessionClaimToken: null,
      gatewayOrderId: "order-1",
      gatewayStatus: "PE",
      cryptoAmount: "0.00123",
      tagMemo: null,
      expiresAt,
      // Untouched columns keep their values.
      amount: "49.90",
      inputCurrency: null,
    });
    // Same time to the millisecond: the ids keep the order in which they were written.
    expect(read.events.map((e) => e.type)).toEqual(["session_received", "order_created"]);
  });

  it("stores an answer only while the attempt still holds the claim and none is stored: otherwise nothing, not even its event", async () => {
    const values = row();
    const created = await insertSessionPayment(sql, values, received);
    const id = created!.id;
    const store = (claimToken: string, gatewayOrderId: string) =>
      storeSessionAnswer(
        sql,
        { id, claimToken },
        { state: "awaiting_payment", responseStatus: 200, responseBody: JSON.stringify({ redirect_url: `https://pay.example/${gatewayOrderId}` }), columns: { gatewayOrderId } },
        { type: "order_created", detail: JSON.stringify({ gatewayOrderId }), at: T0 },
      );
    // Another attempt took the payment over with a token of its own.
    await db.payment.update({ where: { id }, data: { sessionClaimToken: "winner", sessionClaimUntil: new Date(T0.getTime() + 180_000) } });
    expect(await store(values.sessionClaimToken!, "order-late")).toBe(false);
    expect(await db.payment.findUniqueOrThrow({ where: { id } })).toMatchObject({ responseStatus: null, gatewayOrderId: null, sessionClaimToken: "winner" });

    expect(await store("winner", "order-winner")).toBe(true);
    // The winner's answer stands, whoever tries to store after it (the token is cleared with the claim).
    expect(await store("winner", "order-again")).toBe(false);
    expect(await store(values.sessionClaimToken!, "order-late")).toBe(false);
    const read = await db.payment.findUniqueOrThrow({ where: { id }, include: { events: true } });
    expect(read).toMatchObject({ responseStatus: 200, responseBody: '{"redirect_url":"https://pay.example/order-winner"}', gatewayOrderId: "order-winner", sessionClaimToken: null, sessionClaimUntil: null });
    expect(read.events.map((e) => [e.type, e.detail])).toEqual([
      ["session_received", received.detail],
      ["order_created", '{"gatewayOrderId":"order-winner"}'],
    ]);
  });

  it("leaves nothing half-written when the answer cannot be stored", async () => {
    const rowA = row();
    const rowB = row();
    const a = await insertSessionPayment(sql, rowA, received);
    const b = await insertSessionPayment(sql, rowB, received);
    const answer = (id: string, claimToken: string) =>
      storeSessionAnswer(sql, { id, claimToken }, { state: "awaiting_payment", responseStatus: 200, responseBody: "{}", columns: { gatewayOrderId: "same-order" } }, { type: "order_created", detail: "{}", at: T0 });
    await answer(a!.id, rowA.sessionClaimToken!);
    // The gateway order is unique per environment: the second update fails, and its event with it.
    await expect(answer(b!.id, rowB.sessionClaimToken!)).rejects.toThrow();
    const second = await db.payment.findUniqueOrThrow({ where: { id: b!.id }, include: { events: true } });
    expect(second).toMatchObject({ state: "started", responseStatus: null, gatewayOrderId: null });
    expect(second.events.map((e) => e.type)).toEqual(["session_received"]);
  });

  it("records a session on a remembered shop only while the shop's row is unchanged, whichever column changed", async () => {
    const domain = "remembered.myshopify.com";
    const shop = await db.shop.create({
      data: { shopDomain: domain, webhookToken: "rows-webhook-token-0002", sandboxDeviceKeyEnc: "sealed-device", sandboxSecretKeyEnc: "sealed-secret", testMode: true },
      select: { id: true },
    });
    const remembered = (await readSessionShop(sql, domain))!;
    const count = (id: string) => db.payment.count({ where: { shopifyPaymentId: id } });
    const attempt = async () => {
      const values = row({ shopId: shop.id });
      const created = await insertSessionPayment(sql, values, received, { onlyIf: shopRowUnchanged(remembered) });
      return { created, stored: await count(values.shopifyPaymentId) };
    };
    expect(await attempt()).toMatchObject({ created: { id: expect.any(String) }, stored: 1 });
    const changed = (name: string, value: unknown) =>
      value === null ? (name === "uninstalledAt" ? new Date() : "now-set") : typeof value === "boolean" ? !value : `${String(value)}-changed`;
    const columns = Object.keys(remembered).filter((name) => name !== "id") as (keyof SessionShop)[];
    expect(columns).toEqual(expect.arrayContaining(["liveDeviceKeyEnc", "sandboxSecretKeyEnc", "uninstalledAt", "testMode", "checkoutMode", "liveFixedCurrency", "sandboxFixedCurrency", "gatewayLanguage"]));
    for (const name of columns) {
      await db.shop.update({ where: { id: shop.id }, data: { [name]: changed(name, remembered[name]) } });
      expect(await attempt(), `${name} changed`).toEqual({ created: null, stored: 0 });
      await db.shop.update({ where: { id: shop.id }, data: { [name]: remembered[name] } });
      expect(await attempt(), `${name} changed back`).toMatchObject({ created: { id: expect.any(String) }, stored: 1 });
    }
  });

  it("holds a remembered time only while the column has it to the millisecond", async () => {
    const domain = "remembered-time.myshopify.com";
    await db.shop.create({ data: { shopDomain: domain, webhookToken: "rows-webhook-token-0003", uninstalledAt: T0 } });
    const remembered = (await readSessionShop(sql, domain))!;
    expect(remembered.uninstalledAt).toEqual(T0);
    const holds = async () => (await sql.query<{ holds: unknown }>(Prisma.sql`SELECT CASE WHEN ${shopRowUnchanged(remembered)} THEN 1 ELSE 0 END AS "holds"`))[0]!.holds;
    expect(Number(await holds())).toBe(1);
    await db.shop.update({ where: { shopDomain: domain }, data: { uninstalledAt: new Date(T0.getTime() + 1) } });
    expect(Number(await holds())).toBe(0);
  });
});

describe("newRowId", () => {
  it("makes ids that sort in creation order and fit the return links' pattern", () => {
    const ids = Array.from({ length: 10_000 }, newRowId);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z0-9]{10,40}$/);
  });
});
