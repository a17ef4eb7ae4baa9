// Settling from a Payment of the gateway's older shape (recorded from its test environment in
// 2022: no tag_memo, percentage or received_amount in reads, while its creation answers carry
// tag_memo). What the read does not report is not made up: amounts stay unknown (null), the
// memo the creation answer gave is kept, and the admin's timeline still words the status the
// read showed. On SQLite and PostgreSQL.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { paymentDetail } from "../../app/admin/payments.server";
import { parseGatewayJson } from "../../app/gateway/json-numbers";
import { gatewayOrderIdSchema, orderInfoResponseSchema } from "../../app/gateway/schemas";
import { silentLogger } from "../../app/lib/logger.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { settleFromGatewayOrder } from "../../app/payments/settle-payment";
import { fixtureText } from "../gateway/support/fixtures";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

const recorded = orderInfoResponseSchema.parse((parseGatewayJson(fixtureText("orders-info.response.eth_test.2022-10.Naza2021.json")) as { body: unknown }).body);

describe.each(ROW_DATABASES)("on $name", (database) => {
  let rows: OpenedRows;
  const opened = rowsDatabaseForFile(database, { shopDomain: "older-shape.myshopify.com", webhookToken: "older-shape-webhook-token-01" });
  beforeAll(() => void (rows = opened()));
  const deps = (): PaymentsDeps => ({ db: rows.db, sql: rows.sql, clock: { now: () => new Date() }, logger: silentLogger }) as unknown as PaymentsDeps;

  it("a read without tag_memo, percentage or received_amount keeps the memo and leaves the amounts unknown", async () => {
    const id = gatewayOrderIdSchema.parse(randomUUID());
    const payment = await createPayment(rows, { gatewayOrderId: id, gatewayStatus: "NR", tagMemo: "4127553" });
    const settled = await settleFromGatewayOrder(deps(), payment.id, { ...recorded, identifier: id }, "reconcile", new Date());
    expect(settled.payment).toMatchObject({
      state: "awaiting_payment",
      gatewayStatus: "PE",
      inputCurrency: "ETH_TEST",
      cryptoAmount: "0.0079758",
      address: "0xA851bBB59890560c0812B29946EF555F37F32B81",
      tagMemo: "4127553",
      receivedAmount: null,
      percentage: null,
    });
    expect(await rows.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ tagMemo: "4127553", receivedAmount: null, percentage: null, gatewayStatus: "PE" });
    const [event] = await rows.db.paymentEvent.findMany({ where: { paymentId: payment.id, type: "gateway_status" } });
    expect(JSON.parse(event!.detail)).toMatchObject({ from: "NR", to: "PE", percentage: null });
  });

  it("the admin's timeline names the gateway status the read showed, though it carried no percentage", async () => {
    const id = gatewayOrderIdSchema.parse(randomUUID());
    const payment = await createPayment(rows, { gatewayOrderId: id, gatewayStatus: "NR" });
    await settleFromGatewayOrder(deps(), payment.id, { ...recorded, identifier: id }, "reconcile", new Date());
    const detail = (await paymentDetail(rows.db, rows.shopId, payment.id))!;
    expect(detail.gateway.statusLabel).toBe("Pending");
    const statusEntries = detail.timeline.filter((entry) => entry.title.startsWith("Gateway:"));
    expect(statusEntries.map((entry) => entry.title)).toEqual(["Gateway: Pending"]);
    expect(statusEntries[0]!.description).toMatch(/^From Not Ready to Pending \(seen through the periodic check\)\./);
  });

  it("a read that reports an empty tag_memo clears the memo: the gateway says there is none", async () => {
    const id = gatewayOrderIdSchema.parse(randomUUID());
    const payment = await createPayment(rows, { gatewayOrderId: id, gatewayStatus: "NR", tagMemo: "4127553" });
    const settled = await settleFromGatewayOrder(deps(), payment.id, { ...recorded, identifier: id, tag_memo: "" }, "reconcile", new Date());
    expect(settled.payment.tagMemo).toBeNull();
    expect((await rows.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).tagMemo).toBeNull();
  });
});
