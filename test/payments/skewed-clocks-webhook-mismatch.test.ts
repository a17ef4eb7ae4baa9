// Two instances on PostgreSQL whose clocks differ by a few seconds. A gateway read is placed
// against a signed webhook's settlement by comparing the read's time (the reading instance's
// clock, before its call) with the settlement's (the settling instance's clock): a listing asked
// for before the webhook was acted on, by the real clock, does not flag the paid payment
// webhook_mismatch ("compare ... before shipping", which also refuses its capture) because the
// settling instance's clock runs behind; a read asked for well after the settlement that still
// shows the order open does.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { parseGatewayStatus, type ParsedGatewayStatus } from "../../app/gateway/statuses";
import { silentLogger } from "../../app/lib/logger.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { settleFromGatewayOrder, settleFromSignedWebhook } from "../../app/payments/settle-payment";
import { documentedOrder } from "../gateway/support/fixtures";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

const SHOP = "skewed-clocks.myshopify.com";

describe.each(ROW_DATABASES.filter((database) => database.name === "PostgreSQL"))("on $name, two instances", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: "skewed-clocks-webhook-token-00001" });
  let opened: OpenedRows;
  beforeAll(() => void (opened = rows()));

  function instance(clock: () => Date): PaymentsDeps {
    return { db: opened.db, sql: opened.sql, clock: { now: clock }, logger: silentLogger } as unknown as PaymentsDeps;
  }

  /**
   * Real time T + readAfterMs: instance B's listing is asked for; T+1 s: instance A settles the
   * signed CO webhook; then B records its listing.
   */
  async function race(aBehindMs: number, readAfterMs = 0) {
    const T = new Date("2026-11-25T12:00:00.000Z").getTime();
    const gatewayOrderId = randomUUID();
    const payment = await createPayment(opened, {
      state: "confirming",
      gatewayOrderId,
      gatewayStatus: "AC",
      gatewayEditedAt: new Date(T - 60_000),
    });
    // Instance B (clock right) asks the gateway for the shop's orders at T: the order is still AC.
    const readAt = new Date(T + readAfterMs);
    const listed = documentedOrder(gatewayOrderId, "AC", 1, new Date(T - 10_000).toISOString());
    // At T+1 s the order reaches CO; its signed webhook is settled by instance A, whose clock is behind.
    const a = instance(() => new Date(T + 1_000 - aBehindMs));
    const row = await opened.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    const signed = await settleFromSignedWebhook(a, { payment: row, shopDomain: SHOP }, {
      identifier: gatewayOrderId,
      status: parseGatewayStatus("CO") as Extract<ParsedGatewayStatus, { known: true }>,
    });
    expect(signed?.payment.state).toBe("paid");
    // At T+2 s instance B records what its listing (asked for at T, before the webhook) showed.
    const b = instance(() => new Date(T + readAfterMs + 2_000));
    await settleFromGatewayOrder(b, payment.id, listed, "reconcile", readAt);
    return opened.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
  }

  it("control: with the clocks in step, a listing asked for before the webhook was acted on is taken as predating it (no flag)", async () => {
    const after = await race(0);
    expect(after).toMatchObject({ state: "paid", attention: null });
  });

  it("a listing asked for before the webhook was acted on does not flag the paid payment when the settling instance's clock runs 5 s behind", async () => {
    const after = await race(5_000);
    expect(after.state).toBe("paid");
    expect(after.attention, `false alarm: ${after.attentionDetail}`).toBeNull();
  });

  it("a read asked for a minute after the webhook was acted on that still shows the order open flags the payment", async () => {
    const after = await race(5_000, 60_000);
    expect(after).toMatchObject({ state: "paid", attention: "webhook_mismatch", attentionResolvedAt: null });
  });
});
