// The migration that keeps customers' e-mails in lower case, on SQLite and PostgreSQL: an
// address of printable ASCII is lowered (what customerEmailKey would make of it), any other
// keeps its form (SQLite's lower() folds ASCII letters only, and a half-lowered address would
// match no lookup); both are found by customers/redact, the second by its exact form.
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../app/db/database.server";
import { silentLogger } from "../../app/lib/logger.server";
import { redactCustomer } from "../../app/shops/shopify-webhooks.server";
import { createPayment, rerunMigration, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

const SHOP = "email-migration.myshopify.com";

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: "email-migration-token-01" });
  let opened: OpenedRows;
  let db: Database;
  beforeAll(() => void ({ db } = opened = rows()));

  /** Runs the migration again over rows stored as an earlier release stored them (as typed). */
  const migrate = () => rerunMigration(database, db, "20261124220000_customer_email_lower_case");

  it("lowers ASCII addresses, keeps the others as they are, and customers/redact finds both", async () => {
    const ascii = await createPayment(opened, { customerEmail: " Lucia.Fernandez@Example.COM", customerName: "Lucía Fernández" });
    const accented = await createPayment(opened, { customerEmail: "ÉLODIE.Martin@Example.FR", customerName: "Élodie Martin" });
    await migrate();
    const email = async (id: string) => (await db.payment.findUniqueOrThrow({ where: { id } })).customerEmail;
    expect([await email(ascii.id), await email(accented.id)]).toEqual(["lucia.fernandez@example.com", "ÉLODIE.Martin@Example.FR"]);

    // Shopify names the first by their account's e-mail in another case, the second by the very address stored.
    await redactCustomer({ db, logger: silentLogger }, SHOP, { email: "LUCIA.fernandez@example.com", phone: null });
    await redactCustomer({ db, logger: silentLogger }, SHOP, { email: "ÉLODIE.Martin@Example.FR", phone: null });
    const names = async (id: string) => (await db.payment.findUniqueOrThrow({ where: { id } })).customerName;
    expect([await names(ascii.id), await names(accented.id)]).toEqual([null, null]);
  });
});
