// The admin's words for a confirming (AC) payment one unit short of its crypto amount. The
// gateway's percentage is rounded (one unit short of 0.0158 still reads 100.0), so the
// payment's detail decides on the transactions it reads with the payment, as the shopper's
// page does: it says part of the amount arrived, not the whole, since the order ends IA
// (underpaid) unless the rest comes.
import { beforeAll, describe, expect, it } from "vitest";
import { paymentDetail } from "../../app/admin/payments.server";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

describe.each(ROW_DATABASES)("the admin's detail of a payment one unit short, on $name", (database) => {
  let rows: OpenedRows;
  const opened = rowsDatabaseForFile(database, { shopDomain: "confirming-short.myshopify.com", webhookToken: "confirming-short-webhook-token-1" });
  beforeAll(() => void (rows = opened()));

  it("does not tell the merchant the whole amount arrived when the on-chain amounts are short", async () => {
    const payment = await createPayment(rows, {
      state: "confirming",
      gatewayStatus: "AC",
      gatewayOrderId: "0c4f3a1e-6a43-4d0c-9f55-0d8d2f0f4a11",
      inputCurrency: "ETH",
      cryptoAmount: "0.01580000",
      percentage: "100.0",
      receivedAmount: "49.0",
    });
    for (const [txHash, amount] of [["0xa1", "0.01"], ["0xa2", "0.00579999"]] as const) {
      await rows.db.paymentTransaction.create({ data: { paymentId: payment.id, txHash, currency: "ETH", amount, confirmed: false, seenAt: new Date() } });
    }
    const detail = (await paymentDetail(rows.db, rows.shopId, payment.id))!;
    expect(detail.transactions.map((t) => t.amount)).toEqual(["0.01 ETH", "0.00579999 ETH"]);
    // 0.01579999 of 0.01580000 arrived: part of the amount, not all of it.
    expect(detail.state.meaning).toMatch(/Part of the amount/);
  });
});
