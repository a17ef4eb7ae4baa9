// The migration that keeps customers' phones by their key (customerPhoneKey), on SQLite and
// PostgreSQL: a phone of digits, spaces and - ( ) . / (a "+" first alone) is reduced to its
// key, any other keeps its form; customers/redact finds the first by the phone in E.164 and
// the second by the very form stored. A later migration reduces a phone kept as typed with its
// country code in brackets ("(+34) 611 222 333").
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../app/db/database.server";
import { silentLogger } from "../../app/lib/logger.server";
import { redactCustomer } from "../../app/shops/shopify-webhooks.server";
import { createPayment, rerunMigration, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

const SHOP = "phone-migration.myshopify.com";

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: "phone-migration-token-01" });
  let opened: OpenedRows;
  let db: Database;
  beforeAll(() => void ({ db } = opened = rows()));

  /** Runs the migration again over rows stored as an earlier release stored them (as typed). */
  const migrate = () => rerunMigration(database, db, "20261124230000_customer_phone_key");

  it("reduces typed phones to their key, keeps the others as they are, and customers/redact finds both", async () => {
    const typed = ["+34 611 222 333", "+1 (415) 555-0100", "0034.611/222-333", "+34611222444", " +34 611 222 666 "];
    const reduced = await Promise.all(typed.map((phone, i) => createPayment(opened, { customerPhone: phone, customerName: `Reduced ${i}` })));
    const odd = ["+34 611 222 333 ext. 5", "34+611222555"];
    const kept = await Promise.all(odd.map((phone, i) => createPayment(opened, { customerPhone: phone, customerName: `Kept ${i}` })));
    const withEmail = await createPayment(opened, { customerEmail: "has.email@example.com", customerPhone: "+34 611 222 777", customerName: "Has Email" });
    await migrate();
    const phone = async (id: string) => (await db.payment.findUniqueOrThrow({ where: { id } })).customerPhone;
    // The key of that release: "0034…" kept its "00" (today's key reads it as "+34…", and
    // customers/redact still finds it, by that earlier key).
    expect(await Promise.all(reduced.map((p) => phone(p.id)))).toEqual(["+34611222333", "+14155550100", "0034611222333", "+34611222444", "+34611222666"]);
    expect(await Promise.all(kept.map((p) => phone(p.id)))).toEqual(odd);
    expect(await phone(withEmail.id)).toBe("+34611222777");

    // Shopify names the first ones by their phone in E.164, the others by the very form stored.
    for (const sent of ["+14155550100", "+34611222444", "+34611222666", "+34611222333", ...odd]) {
      await redactCustomer({ db, logger: silentLogger }, SHOP, { email: null, phone: sent });
    }
    const name = async (id: string) => (await db.payment.findUniqueOrThrow({ where: { id } })).customerName;
    expect(await Promise.all([...reduced, ...kept].map((p) => name(p.id)))).toEqual([...reduced, ...kept].map(() => null));
    expect(await name(withEmail.id)).toBe("Has Email");
  });

  it("reduces a phone kept as typed with its country code in brackets, and customers/redact finds it; digits without a country code stay another number", async () => {
    const bracketed = ["(+34) 611 333 111", " (+1) 415-555-0111 ", "(+44)7700.900/111"];
    const reduced = await Promise.all(bracketed.map((phone, i) => createPayment(opened, { customerPhone: phone, customerName: `Bracketed ${i}` })));
    const odd = ["(+34) 611 333 222 ext. 5", "(+34) +611333333", "(34) 611 333 444"];
    const kept = await Promise.all(odd.map((phone, i) => createPayment(opened, { customerPhone: phone, customerName: `Kept ${i}` })));
    // Digits with no country code: a release keyed "(+34) 611 333 555" so, and so is Brazil's
    // "(34) 61133-3555" keyed. Not the Spanish customer's for certain: left alone.
    const releaseKey = await createPayment(opened, { customerPhone: "34611333555", customerName: "Release key" });
    await rerunMigration(database, db, "20261130230000_customer_phone_country_code");
    const phone = async (id: string) => (await db.payment.findUniqueOrThrow({ where: { id } })).customerPhone;
    expect(await Promise.all(reduced.map((p) => phone(p.id)))).toEqual(["+34611333111", "+14155550111", "+447700900111"]);
    expect(await Promise.all(kept.map((p) => phone(p.id)))).toEqual(odd);
    expect(await phone(releaseKey.id)).toBe("34611333555");

    for (const sent of ["+34611333111", "+14155550111", "+447700900111", "+34611333555"]) {
      await redactCustomer({ db, logger: silentLogger }, SHOP, { email: null, phone: sent });
    }
    const name = async (id: string) => (await db.payment.findUniqueOrThrow({ where: { id } })).customerName;
    expect(await Promise.all(reduced.map((p) => name(p.id)))).toEqual([null, null, null]);
    expect(await name(releaseKey.id)).toBe("Release key");
    expect(await Promise.all(kept.map((p) => name(p.id)))).toEqual(["Kept 0", "Kept 1", "Kept 2"]);
  });
});
