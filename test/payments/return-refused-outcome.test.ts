// The shopper's return once the payment is final but Shopify refused to take its outcome (the
// merchant's flag says why; a second payment of one checkout is refused, say): no order page
// follows until the merchant sees to it. A shopper who paid is told the payment was received and
// not to pay again, on a page that checks now and then, instead of a "confirming" page that
// reloads every 3 s for ever; one whose payment ended unpaid goes back to the checkout. A final
// call still on its way keeps the usual waiting page. On SQLite and PostgreSQL.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../app/lib/logger.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { handleShopperReturn } from "../../app/payments/handle-return";
import { enqueue, finalMessageKey } from "../../app/payments/outbox";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

const SHOP = "return-refused-outcome.myshopify.com";

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: "return-refused-outcome-01" });
  let opened: OpenedRows;
  beforeAll(() => void (opened = rows()));

  const deps = (): PaymentsDeps =>
    ({
      db: opened.db,
      sql: opened.sql,
      clock: { now: () => new Date() },
      logger: silentLogger,
      gateways: { forShop: () => null, retiredFor: () => null, currencies: async () => null },
      shopify: { forShop: async () => null },
      links: { verify: () => true, returnUrl: () => "", paymentPageUrl: () => "" },
    }) as unknown as PaymentsDeps;

  /** A final payment with its final call stored in `status`. */
  async function finalWithCall(state: "paid" | "failed", status: "failed" | "pending") {
    const payment = await createPayment(opened, { state, gatewayOrderId: randomUUID(), gatewayStatus: state === "paid" ? "CO" : "EX" });
    const message = await opened.db.$transaction((tx) =>
      enqueue(tx, {
        shopDomain: SHOP,
        paymentId: payment.id,
        dedupeKey: finalMessageKey(payment.id),
        payload: state === "paid" ? { kind: "payment.resolve", gid: payment.gid } : { kind: "payment.reject", gid: payment.gid, code: "CANCELLED_PAYMENT", merchantMessage: "Expired." },
        now: new Date(),
      }),
    );
    // A pending call waits out its backoff (not due), as one Shopify failed for a while.
    await opened.db.outboxMessage.update({ where: { id: message.id }, data: { status, nextAttemptAt: new Date(Date.now() + 600_000) } });
    return payment;
  }

  it("paid, its resolve refused: the shopper is told the payment was received, on a page that checks again now and then", async () => {
    const payment = await finalWithCall("paid", "failed");
    const result = await handleShopperReturn(deps(), { paymentId: payment.id, signature: "x", outcome: "ok" });
    expect(result).toEqual({ kind: "shop_notified", retryAfterSeconds: 60, locale: payment.merchantLocale });
  });

  it("failed, its rejection refused: the shopper goes back to the checkout", async () => {
    const payment = await finalWithCall("failed", "failed");
    const result = await handleShopperReturn(deps(), { paymentId: payment.id, signature: "x", outcome: "ko" });
    expect(result).toEqual({ kind: "redirect", url: payment.cancelUrl });
  });

  it("paid, its resolve still on its way: the usual waiting page", async () => {
    const payment = await finalWithCall("paid", "pending");
    const result = await handleShopperReturn(deps(), { paymentId: payment.id, signature: "x", outcome: "ok" });
    expect(result).toMatchObject({ kind: "wait", retryAfterSeconds: 3 });
  });
});
