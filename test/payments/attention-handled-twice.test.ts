// "Mark as handled" pressed in two tabs at once: one closes the flag, and the other, taking the
// payment's row after it, finds it closed. That one is told there is nothing left to handle, not
// that the payment was flagged again (nothing flagged it again). And a flag raised
// again in the same words once the one shown was handled (more crypto after a rejection) is
// another flag: the page shown before, or the same press sent again, does not close it. On both
// databases.
import { describe, expect, it } from "vitest";
import { currentFlag, markAttentionHandled, markHandledAnswer } from "../../app/admin/payments.server";
import { flagColumns } from "../../app/payments/attention-flags";
import { paymentColumns } from "../support/payment-rows";
import { ROW_DATABASES, rowsDatabaseForFile } from "../support/row-databases";

for (const database of ROW_DATABASES) {
  describe(`on ${database.name}`, () => {
    const rows = rowsDatabaseForFile(database, { shopDomain: "handled-twice.myshopify.com", webhookToken: "handled-twice-token-0000000000000000" });

    /** A rejected payment flagged for crypto that arrived after it (gateway status `status`), and that flag. */
    async function lateFlagged(status: string) {
      const { db, shopId } = rows();
      const late = { reason: "late_payment" as const, detail: `Crypto arrived after the payment was rejected (gateway status ${status}). Refund it from the gateway dashboard or arrange the order with the shopper.` };
      const payment = await db.payment.create({ data: paymentColumns(shopId, { state: "failed", ...flagColumns(late) }) });
      return { late, payment };
    }

    it("the second of two simultaneous 'Mark as handled' is not told the payment was flagged again", async () => {
      const { db, shopId } = rows();
      const payment = await db.payment.create({ data: paymentColumns(shopId, { state: "failed", attention: "underpaid", attentionDetail: "Received 20.00 of 49.90 EUR." }) });
      const flag = await currentFlag(db, payment);
      const now = new Date();
      const results = await Promise.all([markAttentionHandled(db, shopId, payment.id, flag, now), markAttentionHandled(db, shopId, payment.id, flag, now)]);
      expect(results.filter((r) => r === "handled")).toHaveLength(1);
      const other = results.find((r) => r !== "handled")!;
      // The flag was not changed: only handled by the other tab.
      expect(other).toBe("nothing_to_handle");
      expect(markHandledAnswer(other).message).not.toContain("flagged again");
      expect((await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).attention).toBe("underpaid");
    });

    // PostgreSQL only: on SQLite one transaction holds the whole database, so nothing lands in between.
    it.runIf(database.name === "PostgreSQL")("a press waiting for the payment's row while another tab's press and a flag raised again in the same words land is told the flag changed", async () => {
      const { db, shopId } = rows();
      const { late, payment } = await lateFlagged("FA");
      const shown = await currentFlag(db, payment);
      let waiting: Promise<string> | null = null;
      await db.$transaction(async (tx) => {
        // The other tab's press holds the payment's row...
        await tx.$executeRaw`UPDATE "Payment" SET "id" = "id" WHERE "id" = ${payment.id}`;
        // ...while this tab's press comes in, for the flag both were shown.
        waiting = markAttentionHandled(db, shopId, payment.id, shown, new Date());
        await new Promise((resolve) => setTimeout(resolve, 300));
        await tx.payment.update({ where: { id: payment.id }, data: { attentionResolvedAt: new Date() } });
        await tx.paymentEvent.create({ data: { paymentId: payment.id, type: "attention_handled", at: new Date() } });
        // More crypto: raised again, in the same words (in the same transaction here, for the order of events).
        await tx.payment.update({ where: { id: payment.id }, data: flagColumns(late) });
      });
      expect(await waiting!).toBe("flag_changed");
      expect((await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).attentionResolvedAt).toBeNull();
    });

    it("a flag raised again in the same words after the one shown was handled is not closed by a press from the page shown before", async () => {
      const { db, shopId } = rows();
      const { late, payment } = await lateFlagged("EX");
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
