// customers/redact takes the customer's payments out of the reports kept for other customers'
// data requests (a household sharing a phone), also once the retention pass has erased the
// payment's own fields: the report's copy is found by the customer's e-mail, or phone when it
// has no e-mail, as customerFilter finds payments. On SQLite and PostgreSQL.
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../app/lib/logger.server";
import { DEFAULT_RETENTION_DAYS, purgeExpiredRows } from "../../app/payments/retention";
import { recordCustomerDataRequest } from "../../app/shops/customer-data-requests.server";
import { redactCustomer } from "../../app/shops/shopify-webhooks.server";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile } from "../support/row-databases";

const DAY_MS = 86_400_000;
const SHOP = "redact-after-retention.myshopify.com";
const CUSTOMER_DATA_DAYS = 90;

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: `redact-after-retention-${database.name}` });

  it("a customers/redact after the retention erased the customer's payment leaves none of their details in another customer's report", async () => {
    const opened = rows();
    const { db, sql } = opened;
    const start = new Date();
    const clock = { at: start, now: () => clock.at };
    const deps = { db, sql, clock, logger: silentLogger };
    const phone = "+34600555777";

    // Carol paid with her phone alone 60 days ago; Bob, with his e-mail and the household phone, lately.
    const carol = await createPayment(opened, {
      state: "paid",
      createdAt: new Date(start.getTime() - 60 * DAY_MS),
      finalizedAt: new Date(start.getTime() - 60 * DAY_MS),
      customerEmail: null,
      customerPhone: phone,
      customerName: "Carolina Phoneonlyova",
      billingAddress: JSON.stringify({ given_name: "Carolina", family_name: "Phoneonlyova", line1: "Avenida Carolina 99", city: "Cordoba" }),
    });
    await createPayment(opened, { state: "paid", finalizedAt: start, customerEmail: "bob.household@example.com", customerPhone: phone, customerName: "Bob Household" });

    // Bob asks for his data today: his report copies Carol's phone-only payment (the app's rule).
    const bobs = await recordCustomerDataRequest(deps, {
      shopDomain: SHOP,
      webhookId: `bob-asks-${database.name}`,
      payload: { customer: { id: 1, email: "bob.household@example.com", phone }, orders_requested: [] },
    });
    expect(bobs?.paymentCount).toBe(2);

    // 40 days on, the retention pass erases Carol's payment (it ended 100 days ago); Bob's
    // report, received 40 days ago, is kept until its own 90 days have run.
    clock.at = new Date(start.getTime() + 40 * DAY_MS);
    await purgeExpiredRows(deps, { retentionDays: DEFAULT_RETENTION_DAYS, customerDataDays: CUSTOMER_DATA_DAYS });
    expect((await db.payment.findUniqueOrThrow({ where: { id: carol.id } })).customerName).toBeNull();
    expect(await db.customerDataRequest.count({ where: { id: bobs!.id } })).toBe(1);

    // Carol asks Shopify to erase her: customers/redact names her by her phone.
    await redactCustomer(deps, SHOP, { email: null, phone });

    const reports = await db.customerDataRequest.findMany({ select: { report: true } });
    const holdingCarol = reports.filter((r) => /Phoneonlyova|Avenida Carolina 99/.test(r.report));
    expect(holdingCarol.length, "Bob's report still holds Carol's name and address after her redaction").toBe(0);
  });
});
