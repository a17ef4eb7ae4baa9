// A customers/data_request for a customer with many payments stores its report whole: no
// statement lists every payment's id (SQLite refuses one of about a thousand parameters). On
// SQLite and PostgreSQL.
import { describe, expect, it } from "vitest";
import { createLogger } from "../../app/lib/logger.server";
import { recordCustomerDataRequest } from "../../app/shops/customer-data-requests.server";
import { paymentColumns } from "../support/payment-rows";
import { ROW_DATABASES, rowsDatabaseForFile } from "../support/row-databases";

const logger = createLogger({ level: "silent" });
const clock = { now: () => new Date() };

// Past SQLite's limit, in more than two batches.
const CASES = ROW_DATABASES.map((database) => ({ database, payments: 1_200 }));

describe.each(CASES)("on $database.name", ({ database, payments }) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: "many-payments.myshopify.com", webhookToken: `many-${database.name}` });

  it(`a data request for a customer with ${payments} payments stores its report`, async () => {
    const { db, shopId } = rows();
    for (let done = 0; done < payments; done += 2_000) {
      const batch = Array.from({ length: Math.min(2_000, payments - done) }, () => paymentColumns(shopId, { customerEmail: "frequent@example.com", state: "paid" }));
      await db.payment.createMany({ data: batch });
    }
    const stored = await recordCustomerDataRequest(
      { db, logger, clock },
      { shopDomain: "many-payments.myshopify.com", webhookId: `wh-${database.name}`, payload: { customer: { id: 1, email: "frequent@example.com" }, orders_requested: [] } as never },
    );
    expect(stored?.paymentCount).toBe(payments);
    const report = JSON.parse((await db.customerDataRequest.findUniqueOrThrow({ where: { id: stored!.id } })).report) as { payments: { createdAt: string; shopifyPaymentId: string }[] };
    expect(new Set(report.payments.map((p) => p.shopifyPaymentId)).size).toBe(payments);
    // Oldest first, as the report has always listed them.
    const times = report.payments.map((p) => p.createdAt);
    expect(times).toEqual([...times].sort());
  }, 120_000);
});
