// "Mark as handled" pressed in two tabs at once: both read the open flag, one closes it, and
// the other's conditional write then finds it closed. That one is told there is nothing left to
// handle, not that the payment was flagged again (nothing flagged it again). And a flag raised
// again in the same words once the one shown was handled (more crypto after a rejection) is
// another flag: the page shown before, or the same press sent again, does not close it. On both
// databases.
import { describe, expect, it } from "vitest";
import type { Database } from "../../app/db/database.server";
import { currentFlag, markAttentionHandled, markHandledAnswer } from "../../app/admin/payments.server";
import { flagColumns } from "../../app/payments/attention-flags";
import { paymentColumns } from "../support/payment-rows";
import { ROW_DATABASES, rowsDatabaseForFile } from "../support/row-databases";

/** The client, where each payment findFirst waits after reading until two have read. */
function bothReadFirst(db: Database): Database {
  let waiting: (() => void)[] = [];
  const payment = new Proxy(db.payment, {
    get(target, name) {
      const value = Reflect.get(target, name) as unknown;
      if (name !== "findFirst" || typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        const row = (await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)) as unknown;
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          if (waiting.length === 2) {
            for (const go of waiting) go();
            waiting = [];
          }
        });
        return row;
      };
    },
  });
  return new Proxy(db, { get: (target, name) => (name === "payment" ? payment : Reflect.get(target, name)) });
}

for (const database of ROW_DATABASES) {
  describe(`on ${database.name}`, () => {
    const rows = rowsDatabaseForFile(database, { shopDomain: "handled-twice.myshopify.com", webhookToken: "handled-twice-token-0000000000000000" });

    it("the second of two simultaneous 'Mark as handled' is not told the payment was flagged again", async () => {
      const { db, shopId } = rows();
      const payment = await db.payment.create({ data: paymentColumns(shopId, { state: "failed", attention: "underpaid", attentionDetail: "Received 20.00 of 49.90 EUR." }) });
      const flag = await currentFlag(db, payment);
      const racing = bothReadFirst(db);
      const now = new Date();
      const results = await Promise.all([markAttentionHandled(racing, shopId, payment.id, flag, now), markAttentionHandled(racing, shopId, payment.id, flag, now)]);
      expect(results.filter((r) => r === "handled")).toHaveLength(1);
      const other = results.find((r) => r !== "handled")!;
      // The flag was not changed: only handled by the other tab.
      expect(other).toBe("nothing_to_handle");
      expect(markHandledAnswer(other).message).not.toContain("flagged again");
      expect((await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).attention).toBe("underpaid");
    });

    it("a flag raised again in the same words after the one shown was handled is not closed by a press from the page shown before", async () => {
      const { db, shopId } = rows();
      const late = { reason: "late_payment" as const, detail: "Crypto arrived after the payment was rejected (gateway status EX). Refund it from the gateway dashboard or arrange the order with the shopper." };
      const payment = await db.payment.create({ data: paymentColumns(shopId, { state: "failed", ...flagColumns(late) }) });
      const shown = await currentFlag(db, payment);
      // Two tabs show the flag; the first closes it.
      expect(await markAttentionHandled(db, shopId, payment.id, shown, new Date())).toBe("handled");
      // More crypto arrives: the same flag, in the same words, is raised again.
      await db.payment.update({ where: { id: payment.id }, data: flagColumns(late) });
      // The second tab's press (or the first's sent again) is for the flag handled before.
      const stale = await markAttentionHandled(db, shopId, payment.id, shown, new Date());
      expect(stale).toBe("flag_changed");
      expect((await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).attentionResolvedAt).toBeNull();
      // The page shown now names the new flag, and its press closes it.
      expect(await markAttentionHandled(db, shopId, payment.id, await currentFlag(db, payment), new Date())).toBe("handled");
      expect((await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).attentionResolvedAt).not.toBeNull();
    });
  });
}
