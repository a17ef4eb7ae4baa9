// customers/data_request and customers/redact for the same customer, on SQLite and PostgreSQL:
// a redaction that lands while the data request is being recorded never leaves a report
// holding what it erased. Landing after the payments were read, it waits for the report and
// then deletes it; landing while they are read, it is waited for and the report holds none of
// what it erased.
import { describe, expect, it } from "vitest";
import type { Database } from "../../app/db/database.server";
import { createLogger } from "../../app/lib/logger.server";
import { recordCustomerDataRequest } from "../../app/shops/customer-data-requests.server";
import { redactCustomer } from "../../app/shops/shopify-webhooks.server";
import { paymentColumns } from "../support/payment-rows";
import { ROW_DATABASES, rowsDatabaseForFile } from "../support/row-databases";

const logger = createLogger({ level: "silent" });
const clock = { now: () => new Date() };
// Long enough for a redaction that nothing holds up to be carried out in full.
const REDACTION_GIVEN_MS = 500;

type Step = "payments read" | "report stored";

/**
 * The client as the data request uses it (outside or inside its transactions), with `land` run
 * once, on the first step named: after the first read of payments returns, or just before the
 * report is stored.
 */
function landingAt(db: Database, step: Step, land: () => Promise<void>): Database {
  let landed = false;
  const once = async () => {
    if (landed) return;
    landed = true;
    await land();
  };
  const watch = <T extends object>(delegate: T, method: string, when: "before" | "after"): T =>
    new Proxy(delegate, {
      get(target, name) {
        const value = Reflect.get(target, name) as unknown;
        if (typeof value !== "function") return value;
        if (name !== method) return value.bind(target);
        return async (...args: unknown[]) => {
          if (when === "before") await once();
          const result = (await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)) as unknown;
          if (when === "after") await once();
          return result;
        };
      },
    });
  const watched = <C extends Pick<Database, "payment" | "customerDataRequest">>(client: C): C =>
    new Proxy(client, {
      get(target, name) {
        if (name === "payment" && step === "payments read") return watch(target.payment, "findMany", "after");
        if (name === "customerDataRequest" && step === "report stored") return watch(target.customerDataRequest, "create", "before");
        const value = Reflect.get(target, name) as unknown;
        if (name === "$transaction" && typeof value === "function") {
          return (work: unknown, ...rest: unknown[]) =>
            typeof work === "function"
              ? (value as (...a: unknown[]) => unknown).call(target, (tx: C) => (work as (tx: C) => unknown)(watched(tx)), ...rest)
              : (value as (...a: unknown[]) => unknown).call(target, work, ...rest);
        }
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  return watched(db);
}

for (const database of ROW_DATABASES) {
  describe(`on ${database.name}`, () => {
    const shopDomain = "redact-race.myshopify.com";
    const rows = rowsDatabaseForFile(database, { shopDomain, webhookToken: "redact-race-token-0000000000000000000" });
    let serial = 0;

    it.each<Step>(["report stored", "payments read"])("a customers/redact landing when the data request's %s leaves no report holding what it erased", async (step) => {
      const { db, shopId } = rows();
      const n = ++serial;
      const email = `forget.me.${n}@example.com`;
      const phone = `+3461100011${n}`;
      const payment = await db.payment.create({
        data: paymentColumns(shopId, { customerEmail: email, customerName: "Forget Me", customerPhone: phone, billingAddress: JSON.stringify({ line1: "Calle Secreta 7" }) }),
      });
      const customer = { id: 900 + n, email, phone };

      let redaction: Promise<number> | null = null;
      const racing = landingAt(db, step, async () => {
        redaction = redactCustomer({ db, logger }, shopDomain, customer);
        // Carried out at once, unless the data request holds it up until its report is stored.
        await Promise.race([redaction, new Promise((resolve) => setTimeout(resolve, REDACTION_GIVEN_MS))]);
      });
      await recordCustomerDataRequest({ db: racing, logger, clock }, { shopDomain, webhookId: `wh-race-${n}`, payload: { customer, orders_requested: [] } });
      expect(redaction).not.toBeNull();
      expect(await redaction!).toBe(1);

      expect((await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).customerName).toBeNull();
      // A report stored after the redaction names the customer as the request does, and holds none of their payments.
      const reports = await db.customerDataRequest.findMany({ where: { shopId, webhookId: `wh-race-${n}` }, select: { report: true } });
      expect(reports.filter((r) => /Forget Me|Calle Secreta 7/.test(r.report))).toEqual([]);
      expect(reports.map((r) => (JSON.parse(r.report) as { payments: unknown[] }).payments)).toEqual(reports.map(() => []));
    });

    it("a data request recorded with no redaction about holds the customer's payments", async () => {
      const { db, shopId } = rows();
      const email = "kept.customer@example.com";
      await db.payment.create({ data: paymentColumns(shopId, { customerEmail: email, customerName: "Kept Customer" }) });
      await db.payment.create({ data: paymentColumns(shopId, { customerEmail: "someone.else@example.com", customerName: "Someone Else" }) });
      const stored = await recordCustomerDataRequest({ db, logger, clock }, { shopDomain, webhookId: "wh-kept", payload: { customer: { id: 7, email }, orders_requested: [] } });
      expect(stored?.paymentCount).toBe(1);
      const report = await db.customerDataRequest.findUniqueOrThrow({ where: { id: stored!.id }, select: { report: true } });
      expect(report.report).toContain("Kept Customer");
      expect(report.report).not.toContain("Someone Else");
    });
  });
}
