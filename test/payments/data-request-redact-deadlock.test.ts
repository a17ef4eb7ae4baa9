// customers/data_request and customers/redact for the same customer at the same moment, on
// PostgreSQL, with many payments: both take the shop's row lock first, so they queue one
// behind the other, whatever order their statements would meet the payments in, and neither
// is aborted as a deadlock. Whichever goes first, no report is left holding erased data.
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openAppDatabase, type Database } from "../../app/db/database.server";
import { applyMigrations } from "../../app/db/migrate.server";
import { createLogger } from "../../app/lib/logger.server";
import { recordCustomerDataRequest } from "../../app/shops/customer-data-requests.server";
import { redactCustomer } from "../../app/shops/shopify-webhooks.server";
import { paymentColumns } from "../support/payment-rows";
import { createTestPostgresDatabase } from "../support/postgres";

const logger = createLogger({ level: "silent" });
const clock = { now: () => new Date() };
const SHOP = "deadlock.myshopify.com";
const EMAIL = "frequent@example.com";

let url = "";
let drop: () => Promise<void> = async () => undefined;
let db: Database;
let shopId = "";

beforeAll(async () => {
  ({ url, drop } = await createTestPostgresDatabase());
  await applyMigrations(url);
  ({ db } = openAppDatabase(url));
  shopId = (await db.shop.create({ data: { shopDomain: SHOP, webhookToken: "deadlock-token-0123456789" }, select: { id: true } })).id;
}, 60_000);

afterAll(async () => {
  await db?.$disconnect();
  await drop();
});

const id = (n: number) => `pay-${String(n).padStart(4, "0")}`;

async function waitingOnLocks(client: pg.Client, count: number) {
  for (let tries = 0; tries < 200; tries++) {
    const { rows } = await client.query<{ n: string }>(`SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
    if (Number(rows[0]!.n) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`never ${count} sessions waiting on a lock`);
}

it("a data request and a redaction of the same customer's many payments queue behind the shop's lock: both succeed, and no report holds what was erased", async () => {
  // 600 payments, stored in another order than their ids, so a scan and an id order differ.
  const rows = [...Array.from({ length: 100 }, (_, i) => 500 + i), ...Array.from({ length: 500 }, (_, i) => i)];
  await db.payment.createMany({ data: rows.map((n) => paymentColumns(shopId, { id: id(n), customerEmail: EMAIL, customerName: "Frequent Shopper", state: "paid" })) });

  // Another session holds the shop's row for a moment, so both arrive while it is taken.
  const other = new pg.Client({ connectionString: url });
  const watcher = new pg.Client({ connectionString: url });
  await other.connect();
  await watcher.connect();
  try {
    await other.query("BEGIN");
    await other.query(`SELECT 1 FROM "Shop" WHERE "id" = $1 FOR UPDATE`, [shopId]);

    const request = recordCustomerDataRequest(
      { db, logger, clock },
      { shopDomain: SHOP, webhookId: "wh-deadlock", payload: { customer: { id: 1, email: EMAIL }, orders_requested: [] } as never },
    );
    await waitingOnLocks(watcher, 1);
    const redaction = redactCustomer({ db, logger }, SHOP, { email: EMAIL });
    await waitingOnLocks(watcher, 2);
    await other.query("COMMIT");

    const [requested, redacted] = await Promise.allSettled([request, redaction]);
    const failure = (settled: PromiseSettledResult<unknown>) => (settled.status === "rejected" ? String((settled.reason as Error).message).slice(0, 300) : "ok");
    expect({ dataRequest: failure(requested), redaction: failure(redacted) }).toEqual({ dataRequest: "ok", redaction: "ok" });
    const reports = await db.customerDataRequest.findMany({ where: { shopId } });
    for (const stored of reports) expect(stored.report).not.toContain("Frequent Shopper");
    expect(await db.payment.count({ where: { shopId, customerName: { not: null } } })).toBe(0);
  } finally {
    await other.end();
    await watcher.end();
  }
}, 60_000);
