// The migration that records when retired credentials were retired, on SQLite and PostgreSQL:
// a pair retired before it takes the migration's time, written as the Prisma client writes its
// own (so it reads back as that time and compares with the payments' times), which keeps every
// payment made until then on it and none made after; an environment with no retired pair gets none.
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../app/db/database.server";
import { beganOnRetiredCredentials, paymentsOnRetiredCredentials } from "../../app/shops/credential-columns";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

const MIGRATION = "20261125080000_retired_credentials_time";
const DIRS: Record<string, string> = { SQLite: "prisma/migrations", PostgreSQL: "prisma/postgresql/migrations" };

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: "retired-time.myshopify.com", webhookToken: "retired-time-token-000001" });
  let opened: OpenedRows;
  let db: Database;
  beforeAll(() => void ({ db } = opened = rows()));

  /** The migration's statements that fill the new columns, run again over rows stored as the release before stored them. */
  async function fillTimes(): Promise<void> {
    const sql = readFileSync(`${DIRS[database.name]}/${MIGRATION}/migration.sql`, "utf8");
    const statements = sql.replace(/^\s*--.*$/gm, "").split(";").map((s) => s.trim());
    for (const statement of statements.filter((s) => s.startsWith("UPDATE"))) await db.$executeRawUnsafe(statement);
  }

  it("gives a pair retired before it the migration's time: the payments made until then began on it, none made after", async () => {
    await db.shop.update({ where: { id: opened.shopId }, data: { sandboxRetiredDeviceKeyEnc: "sealed-device-key", sandboxRetiredSecretKeyEnc: "sealed-secret-key", sandboxRetiredAt: null, liveRetiredAt: null } });
    const before = await createPayment(opened, { createdAt: new Date(Date.now() - 60_000) });
    const started = Date.now();
    await fillTimes();
    const shop = await db.shop.findUniqueOrThrow({ where: { id: opened.shopId } });
    expect(shop.liveRetiredAt).toBeNull();
    expect(shop.sandboxRetiredAt).toBeInstanceOf(Date);
    expect(Math.abs(shop.sandboxRetiredAt!.getTime() - started)).toBeLessThan(10_000);

    const after = await createPayment(opened, { createdAt: new Date(shop.sandboxRetiredAt!.getTime() + 1) });
    expect(beganOnRetiredCredentials(shop, "sandbox", before)).toBe(true);
    expect(beganOnRetiredCredentials(shop, "sandbox", after)).toBe(false);
    const begunOnIt = await db.payment.findMany({ where: { shopId: opened.shopId, gatewayEnv: "sandbox", ...paymentsOnRetiredCredentials(shop, "sandbox") }, select: { id: true } });
    expect(begunOnIt).toEqual([{ id: before.id }]);
  });
});
