// The payments CSV file through the real app (development login), on SQLite and PostgreSQL:
// every payment the list's filters select and no other (not another shop's), newest first,
// each once across the batches it is read in, its amounts as the text stored, its on-chain
// transactions, and a value from outside that a spreadsheet would take as a formula written
// as text; the status a signed notification reported since the order's last read, as the list
// shows it. A malformed filter is dropped, as on the list.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { EXPORT_BATCH } from "../../app/admin/payments-export.server";
import { ensureShop } from "../../app/shops/shop-credentials.server";
import { paymentColumns } from "../support/payment-rows";
import { stackOnDatabase, type Stack } from "../support/stack";

const HEADER = [
  "created_at",
  "updated_at",
  "shopify_payment_id",
  "kind",
  "test",
  "amount",
  "currency",
  "state",
  "shopify_outcome",
  "gateway",
  "gateway_order_id",
  "gateway_status",
  "gateway_status_notified",
  "gateway_record_read",
  "coin",
  "crypto_amount",
  "crypto_received",
  "fiat_received",
  "percentage_paid",
  "transactions",
  "attention",
  "attention_handled",
];

/** RFC 4180 text into rows of fields (quoted fields may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (quoted && c === '"') {
      quoted = false;
    } else if (quoted) {
      field += c;
    } else if (c === '"') {
      quoted = true;
    } else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\r" && text[i + 1] === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
      i++;
    } else {
      field += c;
    }
  }
  if (field !== "" || row.length) throw new Error("the file does not end with a line break");
  return rows;
}

async function exported(stack: Stack, query: string) {
  const response = await fetch(`${stack.app.url}/app/payments/export.csv?shop=${stack.shopDomain}${query}`);
  const text = await response.text();
  return { response, text, rows: response.ok ? parseCsv(text) : [] };
}

describe.each(["sqlite", "postgresql"] as const)("the payments CSV file on %s", (kind) => {
  const stack = stackOnDatabase(kind, { workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
  const base = Date.parse("2026-03-01T00:00:00Z");
  const paidCount = EXPORT_BATCH * 2 + 3;
  let special: { shopifyPaymentId: string; gatewayOrderId: string };
  let notified: { gatewayOrderId: string; readAfter: string };

  beforeAll(async () => {
    stack().logger.info(`payments export: ${paidCount} paid payments stored`);
    const { db } = stack().services;
    const shop = await ensureShop(db, stack().shopDomain);
    const other = await ensureShop(db, "someone-else.myshopify.com");
    // Paid payments over three batches, two to a millisecond (the order then goes by id), and failed ones between them.
    await db.payment.createMany({
      data: Array.from({ length: paidCount }, (_, i) =>
        paymentColumns(shop.id, { state: "paid", gatewayStatus: "CO", gatewayOrderId: randomUUID(), amount: `${10 + (i % 90)}.${String(i % 100).padStart(2, "0")}`, createdAt: new Date(base + Math.floor(i / 2)) }),
      ),
    });
    await db.payment.createMany({ data: Array.from({ length: 40 }, (_, i) => paymentColumns(shop.id, { state: "failed", gatewayStatus: "EX", createdAt: new Date(base + i * 10) })) });
    await db.payment.create({ data: paymentColumns(other.id, { state: "paid", gatewayStatus: "CO", createdAt: new Date(base + 5) }) });
    // In the second batch: an order whose signed AC came after its last read (NR), and one read after its notification.
    notified = { gatewayOrderId: randomUUID(), readAfter: randomUUID() };
    const at = new Date(base + 150);
    const waiting = await db.payment.create({ data: paymentColumns(shop.id, { state: "awaiting_payment", gatewayStatus: "NR", gatewayOrderId: notified.gatewayOrderId, createdAt: at }) });
    const read = await db.payment.create({
      data: paymentColumns(shop.id, { state: "confirming", gatewayStatus: "NR", gatewayOrderId: notified.readAfter, createdAt: at, lastCheckedAt: new Date(base + 60_000) }),
    });
    for (const payment of [waiting, read]) {
      await db.gatewayWebhook.create({
        data: {
          shopId: shop.id,
          gatewayEnv: "sandbox",
          nonce: String(payment.gatewayOrderId),
          signature: randomUUID().replace(/-/g, ""),
          rawBody: JSON.stringify({ identifier: payment.gatewayOrderId, status: "AC" }),
          orderId: payment.gatewayOrderId,
          status: "AC",
          receivedAt: new Date(base + 30_000),
          processedAt: new Date(base + 30_000),
        },
      });
    }
    // The newest: values from the gateway that a spreadsheet would run, two transactions, a flag handled.
    special = { shopifyPaymentId: "gid-like,\"quoted\"\nid", gatewayOrderId: randomUUID() };
    const payment = await db.payment.create({
      data: paymentColumns(shop.id, {
        ...special,
        state: "paid",
        kind: "authorization",
        gatewayStatus: "CO",
        amount: "1234.50",
        currency: "EUR",
        inputCurrency: "=HYPERLINK(\"https://attacker.example\")",
        cryptoAmount: "0.012345678901234567",
        // The gateway's received_amount is the fiat value of what arrived, as a JSON number.
        receivedAmount: "1234.5",
        percentage: "100.0",
        shopifyOutcome: "resolved",
        attention: "overpaid",
        attentionDetail: "more arrived",
        attentionResolvedAt: new Date(base),
        gatewayEditedAt: new Date(base + 86_400_000),
        createdAt: new Date(base + 86_400_000),
      }),
    });
    await db.paymentTransaction.createMany({
      data: [
        { paymentId: payment.id, txHash: "+0xfirst", currency: "ETH", amount: "0.01", confirmed: true, seenAt: new Date(base + 86_400_000) },
        { paymentId: payment.id, txHash: "0xsecond", currency: "ETH", amount: "0.002345678901234567", confirmed: true, seenAt: new Date(base + 86_400_001) },
      ],
    });
  }, 60_000);

  it("holds every paid payment of the shop once, newest first, under a header, as a file to save", async () => {
    const { response, text, rows } = await exported(stack(), "&state=paid");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(response.headers.get("content-disposition")).toMatch(/^attachment; filename="payments-demo-shop-\d{4}-\d{2}-\d{2}\.csv"$/);
    expect(response.headers.get("cache-control")).toBe("private, no-store");
    expect(text.startsWith(`${HEADER.join(",")}\r\n`)).toBe(true);
    const [header, ...payments] = rows;
    expect(header).toEqual(HEADER);
    expect(payments).toHaveLength(paidCount + 1);
    for (const row of payments) expect(row).toHaveLength(HEADER.length);
    const col = (name: string) => HEADER.indexOf(name);
    expect(new Set(payments.map((r) => r[col("shopify_payment_id")])).size).toBe(paidCount + 1);
    expect(payments.every((r) => r[col("state")] === "paid")).toBe(true);

    const { db } = stack().services;
    const shop = await db.shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
    const stored = await db.payment.findMany({ where: { shopId: shop.id, state: "paid" }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], select: { shopifyPaymentId: true, amount: true } });
    expect(payments.map((r) => [r[col("shopify_payment_id")], r[col("amount")]])).toEqual(stored.map((p) => [p.shopifyPaymentId, p.amount]));
  });

  it("writes a payment's crypto and transactions as stored, and a value a spreadsheet would run as text", async () => {
    const { rows } = await exported(stack(), "");
    const row = rows.find((r) => r[HEADER.indexOf("gateway_order_id")] === special.gatewayOrderId)!;
    const fields = Object.fromEntries(HEADER.map((name, i) => [name, row[i]]));
    expect(fields).toMatchObject({
      shopify_payment_id: special.shopifyPaymentId,
      kind: "authorization",
      test: "true",
      amount: "1234.50",
      currency: "EUR",
      state: "paid",
      shopify_outcome: "resolved",
      gateway: "sandbox",
      gateway_status: "CO",
      gateway_record_read: "true",
      coin: "'=HYPERLINK(\"https://attacker.example\")",
      crypto_amount: "0.012345678901234567",
      // The sum of the two transactions, in the coin, to the last of their 18 decimals.
      crypto_received: "0.012345678901234567",
      fiat_received: "1234.5",
      percentage_paid: "100.0",
      transactions: "'+0xfirst 0xsecond",
      attention: "overpaid",
      attention_handled: "true",
    });
    // Settled on a signed notification alone, or never read: not from the gateway's record yet.
    const unread = rows.slice(1).filter((r) => r[HEADER.indexOf("gateway_order_id")] !== special.gatewayOrderId);
    expect(new Set(unread.map((r) => r[HEADER.indexOf("gateway_record_read")]))).toEqual(new Set(["false"]));
    // Newest first: it leads the file.
    expect(rows[1]![HEADER.indexOf("gateway_order_id")]).toBe(special.gatewayOrderId);
    // Every payment of the shop, and no other shop's.
    expect(rows).toHaveLength(1 + paidCount + 1 + 40 + 2);
  });

  it("says what a signed notification reported since the order's last read, when it is another status", async () => {
    const { rows } = await exported(stack(), "");
    const field = (orderId: string, name: string) => rows.find((r) => r[HEADER.indexOf("gateway_order_id")] === orderId)![HEADER.indexOf(name)];
    expect(field(notified.gatewayOrderId, "gateway_status")).toBe("NR");
    expect(field(notified.gatewayOrderId, "gateway_status_notified")).toBe("AC");
    // Read after the notification: the read's status stands.
    expect(field(notified.readAfter, "gateway_status_notified")).toBe("");
    expect(rows.slice(1).filter((r) => r[HEADER.indexOf("gateway_status_notified")] !== "")).toHaveLength(1);
  });

  it("takes the list's filters, and drops a malformed one", async () => {
    const failed = await exported(stack(), "&state=failed&from=2026-03-01&to=2026-03-01");
    expect(failed.rows.slice(1).map((r) => r[HEADER.indexOf("gateway_status")])).toEqual(Array(40).fill("EX"));
    const nextDay = await exported(stack(), "&from=2026-03-02");
    expect(nextDay.rows.slice(1).map((r) => r[HEADER.indexOf("gateway_order_id")])).toEqual([special.gatewayOrderId]);
    const malformed = await exported(stack(), "&state=bogus&status=ZZ&from=2026-02-30");
    expect(malformed.rows).toHaveLength(1 + paidCount + 1 + 40 + 2);
  });
});
