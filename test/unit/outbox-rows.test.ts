// A delivered outbox message's record, on SQLite and PostgreSQL: the message, the payment's
// Shopify side and its timeline entry are written together; a late pending answer never
// replaces a final outcome; a refusal flags the payment; a payment erased meanwhile leaves
// the message done alone. A failed attempt is recorded for retry, and a lasting refusal flags
// its payment once, unless another flag is open; Shopify taking the final call closes it.
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../app/db/database.server";
import type { PlainSql } from "../../app/db/plain-sql.server";
import { recordDelivery, recordRetry, type PaymentAnswer } from "../../app/payments/outbox-rows.server";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile } from "../support/row-databases";

const AT = new Date("2026-11-24T11:00:00.456Z");

describe.each(ROW_DATABASES)("on $name", (database) => {
  let db: Database;
  let sql: PlainSql;
  let serial = 0;

  const rows = rowsDatabaseForFile(database, { shopDomain: "outbox.myshopify.com", webhookToken: "outbox-webhook-token-0001" });
  beforeAll(() => void ({ db, sql } = rows()));

  async function paymentWithMessage(kind: string) {
    serial++;
    const payment = await createPayment(rows(), { state: "paid" });
    const message = await db.outboxMessage.create({
      data: { shopDomain: "outbox.myshopify.com", paymentId: payment.id, kind, dedupeKey: `outbox-${serial}:${kind}`, payload: "{}", lockedBy: "worker", lockedUntil: AT },
    });
    return { payment, message };
  }

  const deliver = (messageId: string, paymentId: string | null, answer: PaymentAnswer | null, status: "done" | "failed" = "done", claim = "worker") =>
    recordDelivery(sql, {
      messageId,
      claim,
      attempts: 2,
      status,
      lastError: status === "failed" ? "refused" : null,
      result: '{"state":null}',
      at: AT,
      payment: paymentId && answer ? { id: paymentId, answer } : null,
    });

  const resolved: PaymentAnswer = { accepted: true, outcome: "resolved", state: "RESOLVED", redirectUrl: "https://shop.example/next", alreadyInState: false };
  const pending: PaymentAnswer = { accepted: true, outcome: "pending", state: "PENDING", redirectUrl: "https://shop.example/pending", alreadyInState: false };
  const events = async (paymentId: string) => (await db.paymentEvent.findMany({ where: { paymentId }, orderBy: { id: "asc" } })).map((e) => [e.type, JSON.parse(e.detail), e.at]);

  it("a resolve: the message done, the payment's Shopify side and its entry, together", async () => {
    const { payment, message } = await paymentWithMessage("payment.resolve");
    // An old version of the row: the record must make a new one (a settlement's guard reads it).
    const LONG_AGO = new Date("2026-01-01T00:00:00.000Z");
    await db.payment.update({ where: { id: payment.id }, data: { updatedAt: LONG_AGO } });
    await deliver(message.id, payment.id, resolved);

    expect(await db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } })).toMatchObject({
      status: "done",
      attempts: 2,
      doneAt: AT,
      lockedBy: null,
      lockedUntil: null,
      lastError: null,
      result: '{"state":null}',
    });
    const stored = await db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(stored).toMatchObject({ shopifyOutcome: "resolved", shopifyState: "RESOLVED", nextActionUrl: "https://shop.example/next", finalizedAt: AT, pendingSentAt: null });
    expect(stored.updatedAt.getTime()).toBeGreaterThan(LONG_AGO.getTime());
    expect(await events(payment.id)).toEqual([["shopify_resolved", { state: "RESOLVED", alreadyInState: false }, AT]]);
  });

  it("a pending answer after the final one keeps the final outcome, state and next action", async () => {
    const { payment, message } = await paymentWithMessage("payment.resolve");
    await deliver(message.id, payment.id, resolved);
    const late = await db.outboxMessage.create({
      data: { shopDomain: "outbox.myshopify.com", paymentId: payment.id, kind: "payment.pending", dedupeKey: `outbox-${serial}:late`, payload: "{}", lockedBy: "worker" },
    });
    await deliver(late.id, payment.id, pending);

    expect(await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({
      shopifyOutcome: "resolved",
      shopifyState: "RESOLVED",
      nextActionUrl: "https://shop.example/next",
      pendingSentAt: AT,
    });
    expect((await events(payment.id)).map(([type]) => type)).toEqual(["shopify_resolved", "shopify_pending"]);
  });

  it("a pending answer first is recorded as the outcome so far", async () => {
    const { payment, message } = await paymentWithMessage("payment.pending");
    await deliver(message.id, payment.id, pending);
    expect(await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({
      shopifyOutcome: "pending",
      shopifyState: "PENDING",
      nextActionUrl: "https://shop.example/pending",
      pendingSentAt: AT,
      finalizedAt: null,
    });
  });

  it("a refusal fails the message and flags the payment for a person", async () => {
    const { payment, message } = await paymentWithMessage("payment.resolve");
    await deliver(message.id, payment.id, { accepted: false, call: "payment.resolve", message: "The payment session is already rejected." }, "failed");

    expect(await db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } })).toMatchObject({ status: "failed", lastError: "refused" });
    expect(await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({
      attention: "shopify_error",
      attentionDetail: "The payment session is already rejected.",
      shopifyOutcome: null,
    });
    expect(await events(payment.id)).toEqual([["shopify_refused", { call: "payment.resolve", message: "The payment session is already rejected." }, AT]]);
  });

  it("a refused pending call flags the payment only when no flag is open but a Shopify call's: another flag's advice stands, and the refusal is on the timeline", async () => {
    const { payment, message } = await paymentWithMessage("payment.pending");
    await db.payment.update({ where: { id: payment.id }, data: { state: "confirming", attention: "amount_mismatch", attentionDetail: "The gateway order is for 10.00 EUR." } });
    await deliver(message.id, payment.id, { accepted: false, call: "payment.pending", message: "The payment session is already rejected." }, "failed");
    expect(await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "amount_mismatch", attentionDetail: "The gateway order is for 10.00 EUR.", attentionResolvedAt: null });
    expect(await events(payment.id)).toEqual([["shopify_refused", { call: "payment.pending", message: "The payment session is already rejected." }, AT]]);

    // With no flag open (the other one handled), the refusal raises its own.
    const other = await paymentWithMessage("payment.pending");
    await db.payment.update({ where: { id: other.payment.id }, data: { state: "confirming", attention: "amount_mismatch", attentionDetail: "Handled.", attentionResolvedAt: AT } });
    await deliver(other.message.id, other.payment.id, { accepted: false, call: "payment.pending", message: "The payment session is already rejected." }, "failed");
    expect(await db.payment.findUniqueOrThrow({ where: { id: other.payment.id } })).toMatchObject({ attention: "shopify_error", attentionDetail: "The payment session is already rejected.", attentionResolvedAt: null });
  });

  it("a lasting refusal of the final call flags the payment over another Shopify call's refusal flag the merchant handled", async () => {
    const { payment, message } = await paymentWithMessage("payment.resolve");
    // The pending call was refused earlier, and the merchant marked that flag handled.
    await db.payment.update({ where: { id: payment.id }, data: { attention: "shopify_error", attentionDetail: "The payment session is already rejected.", attentionResolvedAt: AT } });
    await retry(message.id, payment.id);
    expect(await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "shopify_error", attentionDetail: "Shopify refused the call.", attentionResolvedAt: null });
    expect(await events(payment.id)).toEqual([["shopify_refused", { call: "payment.resolve", message: "PaymentSessionResolve: unauthorized (HTTP 403)", retrying: true }, AT]]);
  });

  it("Shopify taking the final call closes the flag its refusals raised, not one a refund, capture or void answer's refusal raised", async () => {
    const { payment, message } = await paymentWithMessage("payment.resolve");
    const refusedRefund = "Shopify has not taken the app's answer to the refund it asked for (refund session 77: the app refused it). Shopify does not know this refund session.";
    await db.payment.update({ where: { id: payment.id }, data: { attention: "shopify_error", attentionDetail: refusedRefund } });
    await deliver(message.id, payment.id, resolved);
    expect(await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ shopifyOutcome: "resolved", attention: "shopify_error", attentionDetail: refusedRefund, attentionResolvedAt: null });
  });

  it("a payment erased meanwhile leaves the message done, and a call about no payment records the message alone", async () => {
    const { payment, message } = await paymentWithMessage("payment.resolve");
    await db.payment.delete({ where: { id: payment.id } });
    await deliver(message.id, payment.id, resolved);
    expect(await db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } })).toMatchObject({ status: "done" });
    expect(await db.paymentEvent.count({ where: { paymentId: payment.id } })).toBe(0);

    const configure = await db.outboxMessage.create({ data: { shopDomain: "outbox.myshopify.com", kind: "app.configure", dedupeKey: `configure-${serial}`, payload: "{}", lockedBy: "worker" } });
    await deliver(configure.id, null, null);
    expect(await db.outboxMessage.findUniqueOrThrow({ where: { id: configure.id } })).toMatchObject({ status: "done", doneAt: AT });
  });

  it("a delivery whose claim was taken over records nothing: the worker holding the message now records its own", async () => {
    const { payment, message } = await paymentWithMessage("payment.resolve");
    await db.outboxMessage.update({ where: { id: message.id }, data: { lockedBy: "other" } });
    await deliver(message.id, payment.id, resolved);
    expect(await db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } })).toMatchObject({ status: "pending", lockedBy: "other", doneAt: null });
    expect(await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ shopifyOutcome: null, finalizedAt: null });
    expect(await events(payment.id)).toEqual([]);

    await deliver(message.id, payment.id, resolved, "done", "other");
    expect(await db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } })).toMatchObject({ status: "done", lockedBy: null });
    expect(await events(payment.id)).toEqual([["shopify_resolved", { state: "RESOLVED", alreadyInState: false }, AT]]);
    // Recorded once: a second record of the done message changes nothing.
    await deliver(message.id, payment.id, resolved, "done", "other");
    expect(await events(payment.id)).toHaveLength(1);
  });
  const retry = (messageId: string, paymentId: string | null, claim = "worker") =>
    recordRetry(sql, {
      messageId,
      claim,
      attempts: 3,
      lastError: "PaymentSessionResolve: unauthorized (HTTP 403)",
      nextAttemptAt: new Date(AT.getTime() + 600_000),
      at: AT,
      flagPayment: paymentId ? { id: paymentId, call: "payment.resolve", detail: "Shopify refused the call." } : null,
    });

  it("a failed attempt is kept for retry; a lasting refusal flags the payment once (not again once handled), and Shopify taking the resolve leaves it closed", async () => {
    const { payment, message } = await paymentWithMessage("payment.resolve");
    await retry(message.id, payment.id);
    expect(await db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } })).toMatchObject({
      status: "pending",
      attempts: 3,
      lastError: "PaymentSessionResolve: unauthorized (HTTP 403)",
      nextAttemptAt: new Date(AT.getTime() + 600_000),
      lockedBy: null,
      lockedUntil: null,
    });
    expect(await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "shopify_error", attentionDetail: "Shopify refused the call.", attentionResolvedAt: null });
    expect(await events(payment.id)).toEqual([["shopify_refused", { call: "payment.resolve", message: "PaymentSessionResolve: unauthorized (HTTP 403)", retrying: true }, AT]]);

    await db.outboxMessage.update({ where: { id: message.id }, data: { lockedBy: "worker" } });
    await retry(message.id, payment.id);
    expect(await events(payment.id)).toHaveLength(1);

    // The merchant marked it handled: the next failures do not raise it again.
    const HANDLED = new Date("2026-11-24T12:00:00.000Z");
    await db.payment.update({ where: { id: payment.id }, data: { attentionResolvedAt: HANDLED } });
    await db.outboxMessage.update({ where: { id: message.id }, data: { lockedBy: "worker" } });
    await retry(message.id, payment.id);
    expect(await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "shopify_error", attentionResolvedAt: HANDLED });
    expect(await events(payment.id)).toHaveLength(1);

    await db.outboxMessage.update({ where: { id: message.id }, data: { lockedBy: "worker" } });
    await deliver(message.id, payment.id, resolved);
    expect(await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ shopifyOutcome: "resolved", attention: "shopify_error", attentionResolvedAt: HANDLED });
  });

  it("a lasting refusal flags a payment whose earlier flag of another kind was handled", async () => {
    const { payment, message } = await paymentWithMessage("payment.resolve");
    await db.payment.update({ where: { id: payment.id }, data: { attention: "underpaid", attentionResolvedAt: AT } });
    await retry(message.id, payment.id);
    expect(await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "shopify_error", attentionResolvedAt: null });
  });

  it("a failed attempt leaves another open flag as it is, and a pending answer leaves an open refusal flag open", async () => {
    const { payment, message } = await paymentWithMessage("payment.resolve");
    await db.payment.update({ where: { id: payment.id }, data: { attention: "underpaid", attentionDetail: "Paid 90 %." } });
    await retry(message.id, payment.id);
    expect(await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "underpaid", attentionDetail: "Paid 90 %.", attentionResolvedAt: null });
    expect(await events(payment.id)).toEqual([]);

    const other = await paymentWithMessage("payment.pending");
    await db.payment.update({ where: { id: other.payment.id }, data: { attention: "shopify_error", attentionDetail: "Refused." } });
    await deliver(other.message.id, other.payment.id, pending);
    expect(await db.payment.findUniqueOrThrow({ where: { id: other.payment.id } })).toMatchObject({ attention: "shopify_error", attentionResolvedAt: null });
  });

  it("a failed attempt whose claim was taken over records nothing", async () => {
    const { payment, message } = await paymentWithMessage("payment.resolve");
    await db.outboxMessage.update({ where: { id: message.id }, data: { lockedBy: "other" } });
    await retry(message.id, payment.id);
    expect(await db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } })).toMatchObject({ attempts: 0, lastError: null, lockedBy: "other" });
    expect(await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: null });
    expect(await events(payment.id)).toEqual([]);
  });
});
