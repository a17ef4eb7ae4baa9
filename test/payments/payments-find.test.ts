// Finding one payment in the admin by the reference a merchant has at hand: Shopify's payment
// id or session gid, the gateway order's identifier, or a transaction hash from a block
// explorer. Through the real app (development login) on SQLite and PostgreSQL: the list shows
// that payment alone, and the CSV file of the same filters holds it alone; a reference no
// payment of the shop holds (another shop's, or one no payment can hold) finds nothing.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { ensureShop } from "../../app/shops/shop-credentials.server";
import { getAdminPage } from "../support/admin-pages";
import { paymentColumns } from "../support/payment-rows";
import { stackOnDatabase } from "../support/stack";

describe.each(["sqlite", "postgresql"] as const)("finding a payment on %s", (kind) => {
  const stack = stackOnDatabase(kind, { workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
  const wanted = { shopifyPaymentId: `pay-${randomUUID()}`, gatewayOrderId: randomUUID(), txHash: `0x${"ab".repeat(32)}` };
  let gid = "";
  let othersOrder = "";

  beforeAll(async () => {
    stack().logger.info("finding a payment: 31 payments stored");
    const { db } = stack().services;
    const shop = await ensureShop(db, stack().shopDomain);
    const other = await ensureShop(db, "another-shop.myshopify.com");
    await db.payment.createMany({ data: Array.from({ length: 30 }, () => paymentColumns(shop.id, { state: "paid", gatewayStatus: "CO", gatewayOrderId: randomUUID() })) });
    const payment = await db.payment.create({
      data: paymentColumns(shop.id, { shopifyPaymentId: wanted.shopifyPaymentId, gatewayOrderId: wanted.gatewayOrderId, state: "paid", gatewayStatus: "CO" }),
    });
    gid = payment.gid;
    await db.paymentTransaction.create({ data: { paymentId: payment.id, txHash: wanted.txHash, currency: "ETH", amount: "0.01", confirmed: true, seenAt: new Date() } });
    othersOrder = (await db.payment.create({ data: paymentColumns(other.id, { state: "paid", gatewayStatus: "CO", gatewayOrderId: randomUUID() }) })).gatewayOrderId!;
  }, 60_000);

  it("finds the one payment by any of its references, in the list and in the CSV file", async () => {
    // Also with the invisible characters a copy from a web page may bring along.
    for (const q of [wanted.shopifyPaymentId, gid, wanted.gatewayOrderId, wanted.txHash, `  ${wanted.txHash}  `, `\u200b${wanted.txHash}\u200b`]) {
      const page = await getAdminPage(stack(), `/app/payments?q=${encodeURIComponent(q)}`);
      expect(page.status, q).toBe(200);
      expect(page.text, q).toContain("1 payment ");
      expect(page.text, q).toContain(wanted.shopifyPaymentId);
      expect(page.text, q).toContain("1–1 of 1");
      const csv = await (await fetch(`${stack().app.url}/app/payments/export.csv?shop=${stack().shopDomain}&q=${encodeURIComponent(q)}`)).text();
      const lines = csv.split("\r\n").filter(Boolean);
      expect(lines, q).toHaveLength(2);
      expect(lines[1], q).toContain(wanted.gatewayOrderId);
    }
  });

  it("finds nothing for another shop's order, a part of a reference, or one no payment can hold (two words, too long), in the list and in the CSV file", async () => {
    for (const q of [othersOrder, wanted.txHash.slice(0, 20), `${wanted.txHash} ${wanted.gatewayOrderId}`, "z".repeat(300)]) {
      const page = await getAdminPage(stack(), `/app/payments?q=${encodeURIComponent(q)}`);
      expect(page.status, q).toBe(200);
      expect(page.text, q).toContain("No payments match these filters.");
      const csv = await (await fetch(`${stack().app.url}/app/payments/export.csv?shop=${stack().shopDomain}&q=${encodeURIComponent(q)}`)).text();
      expect(csv.split("\r\n").filter(Boolean), q).toHaveLength(1);
    }
  });
});
