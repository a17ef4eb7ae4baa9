// A settlement's one write, on SQLite and PostgreSQL: the payment, its events, its on-chain
// transactions and its final Shopify call are written together from the row the settlement
// was decided on, or not at all when that row changed meanwhile; what it stores reads back
// through the models as a model write would have stored it.
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Database } from "../../app/db/database.server";
import type { PlainSql } from "../../app/db/plain-sql.server";
import { recordRetry } from "../../app/payments/outbox-rows.server";
import { writeSettlement, type SettlementWrite } from "../../app/payments/settlement-rows.server";
import type { Payment } from "../../generated/prisma/sqlite/client";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile } from "../support/row-databases";

const T0 = new Date("2026-11-24T10:00:00.123Z");
const later = (ms: number) => new Date(T0.getTime() + ms);

describe.each(ROW_DATABASES)("on $name", (database) => {
  let db: Database;
  let sql: PlainSql;
  let serial = 0;

  const rows = rowsDatabaseForFile(database, { shopDomain: "settle.myshopify.com", webhookToken: "settle-webhook-token-0001" });
  beforeAll(() => void ({ db, sql } = rows()));

  async function openPayment(): Promise<Payment> {
    serial++;
    return createPayment(rows(), { gatewayOrderId: `order-${serial}`, gatewayStatus: "PE" });
  }

  const paid = (payment: Payment, overrides: Partial<SettlementWrite> = {}): SettlementWrite => ({
    paymentId: payment.id,
    seen: { state: payment.state, updatedAt: payment.updatedAt, attention: payment.attention, attentionDetail: payment.attentionDetail, attentionResolvedAt: payment.attentionResolvedAt },
    columns: {
      state: "paid",
      gatewayStatus: "CO",
      gatewayEditedAt: later(-5_000),
      receivedAmount: "0.00082893",
      expiresAt: later(900_000),
      lastCheckedAt: T0,
      unverifiedSince: null,
      attention: null,
    },
    updatedAt: new Date(payment.updatedAt.getTime() + 1),
    events: [
      { type: "gateway_status", detail: '{"from":"PE","to":"CO"}' },
      { type: "state", detail: '{"from":"awaiting_payment","to":"paid"}' },
    ],
    at: T0,
    transactions: [
      { txHash: "tx-a", currency: "BTC", amount: "0.0005", confirmed: false, block: null, seenAt: later(-60_000) },
      { txHash: "tx-b", currency: "BTC", amount: "0.00032893", confirmed: true, block: 870_001n, seenAt: later(-30_000) },
    ],
    message: { shopDomain: "settle.myshopify.com", kind: "payment.resolve", dedupeKey: `payment:${payment.id}:final`, payload: '{"kind":"payment.resolve"}' },
    ...overrides,
  });

  it("writes the payment, its events in order, its transactions and its final call together", async () => {
    const payment = await openPayment();
    const write = paid(payment);
    const written = await writeSettlement(sql, write);

    const message = await db.outboxMessage.findUniqueOrThrow({ where: { dedupeKey: write.message!.dedupeKey } });
    expect(written).toEqual({ messageId: message.id });
    expect(message).toMatchObject({ paymentId: payment.id, kind: "payment.resolve", status: "pending", attempts: 0, nextAttemptAt: T0, lockedBy: null });
    const stored = await db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(stored).toEqual({ ...payment, ...write.columns, updatedAt: write.updatedAt });
    const events = await db.paymentEvent.findMany({ where: { paymentId: payment.id }, orderBy: [{ at: "asc" }, { id: "asc" }] });
    expect(events.map((e) => [e.type, e.detail, e.at])).toEqual(write.events.map((e) => [e.type, e.detail, T0]));
    const transactions = await db.paymentTransaction.findMany({ where: { paymentId: payment.id }, orderBy: { txHash: "asc" } });
    expect(transactions.map(({ id: _id, ...t }) => t)).toEqual(write.transactions.map((t) => ({ paymentId: payment.id, ...t })));
  });

  it("writes nothing when the payment changed since it was seen", async () => {
    const payment = await openPayment();
    // Another writer moved it first (its own version of the row).
    const moved = await db.payment.update({ where: { id: payment.id }, data: { gatewayStatus: "AC" } });
    expect(await writeSettlement(sql, paid(payment))).toBeNull();
    // Same state, a different version: still nothing.
    expect(await writeSettlement(sql, paid({ ...payment, updatedAt: later(-1) }))).toBeNull();

    expect(await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toEqual(moved);
    expect(await db.paymentEvent.count({ where: { paymentId: payment.id } })).toBe(0);
    expect(await db.paymentTransaction.count({ where: { paymentId: payment.id } })).toBe(0);
    expect(await db.outboxMessage.count({ where: { paymentId: payment.id } })).toBe(0);
    // From the row as it is now, it is written.
    expect(await writeSettlement(sql, paid(moved))).not.toBeNull();
  });

  describe("a flag raised by the outbox in the millisecond the settlement's row was seen", () => {
    afterEach(() => void vi.useRealTimers());

    it("writes nothing: the settlement is decided again rather than writing over the flag", async () => {
      // The wall clock held on one millisecond: the outbox's write gives the row the updatedAt it had.
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(T0);
      const payment = await createPayment(rows(), { state: "paid", kind: "authorization", gatewayOrderId: `order-${++serial}`, updatedAt: T0 });
      // A settlement (a read showing an overpayment) is decided on the row as it is now: no flag.
      const seen = await db.payment.findUniqueOrThrow({ where: { id: payment.id } });
      // Shopify refuses the app's answer to a capture: the payment is flagged, in the same millisecond.
      const message = await db.outboxMessage.create({
        data: { shopDomain: "settle.myshopify.com", paymentId: payment.id, kind: "capture.resolve", dedupeKey: `capture:${payment.id}`, payload: "{}", lockedBy: "w1", lockedUntil: later(30_000) },
      });
      const opening = "Shopify has not taken the app's answer to the capture it asked for.";
      await recordRetry(sql, {
        messageId: message.id,
        claim: "w1",
        attempts: 1,
        lastError: "HTTP 403",
        nextAttemptAt: later(1_000),
        at: T0,
        flagPayment: null,
        followUpRefused: { id: payment.id, call: "capture.resolve", session: "gid://shopify/CaptureSession/1", opening, detail: `${opening} HTTP 403` },
      });
      const flagged = await db.payment.findUniqueOrThrow({ where: { id: payment.id } });
      expect(flagged).toMatchObject({ attention: "shopify_error", updatedAt: seen.updatedAt });

      const overpaid = paid(seen, { columns: { attention: "overpaid", attentionDetail: "More crypto arrived than the order's amount.", attentionResolvedAt: null }, events: [], transactions: [], message: null });
      expect(await writeSettlement(sql, overpaid)).toBeNull();
      expect(await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toEqual(flagged);
      // Decided again on the row as it is now, it is written.
      expect(await writeSettlement(sql, { ...overpaid, seen: paid(flagged).seen })).not.toBeNull();
    });
  });

  it("of two settlements decided on the same row, concurrently, exactly one is written", async () => {
    const payment = await openPayment();
    const results = await Promise.all([writeSettlement(sql, paid(payment)), writeSettlement(sql, paid(payment, { events: [{ type: "other", detail: "{}" }] }))]);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect(await db.outboxMessage.count({ where: { paymentId: payment.id } })).toBe(1);
    const events = await db.paymentEvent.findMany({ where: { paymentId: payment.id } });
    expect(events.map((e) => e.type)).toEqual(results[0] ? ["gateway_status", "state"] : ["other"]);
  });

  it("keeps the final call already stored, and updates a known transaction's confirmation", async () => {
    const payment = await openPayment();
    const first = await writeSettlement(sql, paid(payment, { columns: { gatewayStatus: "AC" }, events: [], message: null }));
    expect(first).toEqual({ messageId: null });
    const existing = await db.outboxMessage.create({
      data: { shopDomain: "settle.myshopify.com", paymentId: payment.id, kind: "payment.reject", dedupeKey: `payment:${payment.id}:final`, payload: "{}" },
    });
    const seen = await db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    const write = paid(seen, {
      transactions: [
        { txHash: "tx-a", currency: "BTC", amount: "0.0005", confirmed: false, block: null, seenAt: later(-60_000) },
        // The same hash reported twice in one answer: the last report wins.
        { txHash: "tx-a", currency: "BTC", amount: "0.0005", confirmed: true, block: 870_002n, seenAt: later(-60_000) },
      ],
    });
    expect(await writeSettlement(sql, write)).toEqual({ messageId: existing.id });
    expect(await db.outboxMessage.count({ where: { paymentId: payment.id } })).toBe(1);
    const transactions = await db.paymentTransaction.findMany({ where: { paymentId: payment.id }, orderBy: { txHash: "asc" } });
    expect(transactions.map((t) => [t.txHash, t.confirmed, t.block])).toEqual([
      ["tx-a", true, 870_002n],
      ["tx-b", true, 870_001n],
    ]);
  });

  it("stores a block number past 2^31, as the gateway may report one (64 bits, as the gateway's safe integers)", async () => {
    const payment = await openPayment();
    const block = 2_200_000_000n;
    const write = paid(payment, { transactions: [{ txHash: "tx-far", currency: "SOL", amount: "0.5", confirmed: true, block, seenAt: later(-1_000) }] });
    expect(await writeSettlement(sql, write)).not.toBeNull();
    expect((await db.paymentTransaction.findFirstOrThrow({ where: { paymentId: payment.id } })).block).toBe(block);
  });

  it("never takes a transaction's confirmation back: a report that lists it unconfirmed was taken before it", async () => {
    const payment = await openPayment();
    expect(await writeSettlement(sql, paid(payment))).not.toBeNull();
    const seen = await db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    const report = paid(seen, {
      columns: { lastCheckedAt: later(1_000) },
      events: [],
      message: null,
      transactions: [
        { txHash: "tx-a", currency: "BTC", amount: "0.0005", confirmed: true, block: 870_003n, seenAt: later(-60_000) },
        { txHash: "tx-b", currency: "BTC", amount: "0.00032893", confirmed: false, block: null, seenAt: later(-30_000) },
      ],
    });
    expect(await writeSettlement(sql, report)).toEqual({ messageId: null });
    const transactions = await db.paymentTransaction.findMany({ where: { paymentId: payment.id }, orderBy: { txHash: "asc" } });
    expect(transactions.map((t) => [t.txHash, t.confirmed, t.block])).toEqual([
      ["tx-a", true, 870_003n],
      ["tx-b", true, 870_001n],
    ]);
  });
});
