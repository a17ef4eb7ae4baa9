// Settles a payment from what the app learns of its gateway order: records what the
// gateway says, moves the state machine forward (never back), flags what a person must
// see, and stores the one final Shopify call (resolve or reject) in the outbox, exactly
// once per payment whatever order observations arrive in and however many instances run.
//
// Two kinds of observation: an authoritative read (GET /orders/info or a listing), and a
// signed webhook reporting a final status for an open payment. The second settles without
// spending a gateway call and marks the payment unverified; the reconciler's next listing
// of the shop's orders checks it and flags any disagreement for a person.
import type { GatewayOrder } from "~/gateway/schemas";
import type { GatewayStatus, ParsedGatewayStatus } from "~/gateway/statuses";
import type { Payment, Prisma } from "../../generated/prisma/sqlite/client";
import type { PaymentsDeps } from "./deps";
import type { OutboxMessage } from "../../generated/prisma/sqlite/client";
import { enqueue } from "./outbox";
import { isFinalPaymentState, isPaymentState, nextState, stateForDecision, type PaymentState } from "./payment-state";
import { decideForParsedStatus, type AttentionReason, type SettlementDecision } from "./status-mapping";

export type SettleSource = "webhook" | "signed_webhook" | "return" | "reconcile" | "check" | "create";

/** What the app knows of a gateway order. */
export type GatewayObservation =
  | { kind: "read"; order: GatewayOrder }
  /** A verified webhook's final status: only the identifier and the status are relied on. */
  | { kind: "signed_webhook"; identifier: string; status: Extract<ParsedGatewayStatus, { known: true }> };

/** The webhook claimed one thing and the gateway's own record shows another. */
function mismatchDetail(claimed: string | null, read: GatewayStatus | string): string {
  return `A signed gateway webhook reported status ${claimed ?? "(none)"}, but the gateway's order now shows ${read}. Compare the order in the gateway dashboard with Shopify before shipping or refunding.`;
}

export interface SettleResult {
  payment: Payment;
  decision: SettlementDecision;
  /** The final Shopify call stored by this settlement, if it stored one. */
  finalMessage: OutboxMessage | null;
}

export class PaymentOrderMismatchError extends Error {
  override name = "PaymentOrderMismatchError";
}

function stateOf(payment: Payment): PaymentState {
  if (!isPaymentState(payment.state)) throw new Error(`payment ${payment.id} has an unknown state`);
  return payment.state;
}

function attentionFor(
  payment: Payment,
  current: PaymentState,
  order: GatewayOrder,
  decision: SettlementDecision,
  knownTransactions: number,
): { reason: AttentionReason; detail: string } | null {
  if (decision.kind === "review") return { reason: decision.attention, detail: decision.detail };
  if (decision.kind === "reject" && decision.attention && current !== "failed") {
    return { reason: decision.attention, detail: decision.merchantMessage };
  }
  // Money that arrives after the Shopify session was rejected: a person must act.
  if (current === "failed" && payment.attention === null && order.transactions.length > knownTransactions) {
    return {
      reason: "late_payment",
      detail: `Crypto arrived after the payment was rejected (gateway status ${order.status.code}). Refund it from the gateway dashboard or arrange the order with the shopper.`,
    };
  }
  return null;
}

export function settleFromGatewayOrder(deps: PaymentsDeps, paymentId: string, order: GatewayOrder, source: SettleSource): Promise<SettleResult> {
  return settle(deps, paymentId, { kind: "read", order }, source).then((result) => result!);
}

/**
 * Settles an open payment from a verified webhook's final status, without a gateway call.
 * Null when the payment is already final: a read must decide what a late status means.
 */
export function settleFromSignedWebhook(
  deps: PaymentsDeps,
  paymentId: string,
  observation: Omit<Extract<GatewayObservation, { kind: "signed_webhook" }>, "kind">,
): Promise<SettleResult | null> {
  return settle(deps, paymentId, { kind: "signed_webhook", ...observation }, "signed_webhook");
}

async function settle(deps: PaymentsDeps, paymentId: string, observation: GatewayObservation, source: SettleSource): Promise<SettleResult | null> {
  const identifier = observation.kind === "read" ? observation.order.identifier : observation.identifier;
  const status = observation.kind === "read" ? observation.order.status : observation.status;
  for (let attempt = 0; attempt < 5; attempt++) {
    const outcome = await deps.db.$transaction(async (tx) => {
      const payment = await tx.payment.findUnique({ where: { id: paymentId }, include: { shop: true } });
      if (!payment) throw new Error(`payment ${paymentId} not found`);
      if (payment.gatewayOrderId && payment.gatewayOrderId !== identifier) {
        throw new PaymentOrderMismatchError(`payment ${paymentId} belongs to another gateway order`);
      }
      const now = deps.clock.now();
      const current = stateOf(payment);
      if (observation.kind === "signed_webhook" && isFinalPaymentState(current)) return "final" as const;
      const decision = decideForParsedStatus(status);
      const next = nextState(current, stateForDecision(decision));
      const statusChanged = payment.gatewayStatus !== status.code;

      let attention: { reason: AttentionReason; detail: string } | null;
      let data: Prisma.PaymentUpdateManyMutationInput;
      if (observation.kind === "read") {
        const order = observation.order;
        const readTarget = stateForDecision(decision);
        const contradicted = payment.unverifiedSince !== null && readTarget !== null && readTarget !== current;
        const knownTransactions = await tx.paymentTransaction.count({ where: { paymentId } });
        attention = contradicted
          ? { reason: "webhook_mismatch", detail: mismatchDetail(payment.gatewayStatus, order.status.code) }
          : attentionFor(payment, current, order, decision, knownTransactions);
        data = {
          state: next,
          gatewayStatus: order.status.code,
          inputCurrency: order.currency_id,
          cryptoAmount: order.crypto_amount,
          receivedAmount: order.received_amount,
          percentage: order.percentage,
          address: order.address,
          tagMemo: order.tag_memo || null,
          expiresAt: order.expired_time ? new Date(order.expired_time) : null,
          lastCheckedAt: now,
          unverifiedSince: null,
        };
      } else {
        attention = decision.kind === "reject" && decision.attention ? { reason: decision.attention, detail: decision.merchantMessage } : null;
        data = { state: next, gatewayStatus: status.code, unverifiedSince: now };
      }
      if (attention) Object.assign(data, { attention: attention.reason, attentionDetail: attention.detail, attentionResolvedAt: null });

      // Optimistic concurrency: only the writer that saw the current state moves it.
      const updated = await tx.payment.updateMany({
        where: { id: paymentId, state: current, updatedAt: payment.updatedAt },
        data: { ...data, ...(payment.gatewayOrderId ? {} : { gatewayOrderId: identifier }) },
      });
      if (updated.count !== 1) return null;

      // The timeline's entries of this settlement, in one insert (their ids keep this order).
      const events: { type: string; detail: unknown }[] = [];
      if (statusChanged) {
        const percentage = observation.kind === "read" ? observation.order.percentage : undefined;
        events.push({ type: "gateway_status", detail: { from: payment.gatewayStatus, to: status.code, source, percentage } });
      }
      if (next !== current) events.push({ type: "state", detail: { from: current, to: next, source } });
      if (attention) events.push({ type: "attention", detail: attention });
      if (observation.kind === "read" && payment.unverifiedSince !== null && !attention) events.push({ type: "verified", detail: { status: status.code, source } });
      if (events.length > 0) {
        await tx.paymentEvent.createMany({ data: events.map((event) => ({ paymentId, type: event.type, detail: JSON.stringify(event.detail), at: now })) });
      }
      for (const transaction of observation.kind === "read" ? observation.order.transactions : []) {
        await tx.paymentTransaction.upsert({
          where: { paymentId_txHash: { paymentId, txHash: transaction.tx_hash } },
          create: {
            paymentId,
            txHash: transaction.tx_hash,
            currency: transaction.currency,
            amount: transaction.amount,
            confirmed: transaction.confirmed,
            block: transaction.block === null ? null : Number(transaction.block),
            seenAt: new Date(transaction.created_at),
          },
          update: { confirmed: transaction.confirmed, block: transaction.block === null ? null : Number(transaction.block) },
        });
      }

      let finalMessage: OutboxMessage | null = null;
      if (next !== current && (next === "paid" || next === "failed")) {
        finalMessage = await enqueue(tx, {
          shopDomain: payment.shop.shopDomain,
          paymentId,
          dedupeKey: `payment:${paymentId}:final`,
          payload:
            decision.kind === "reject"
              ? { kind: "payment.reject", gid: payment.gid, code: decision.code, merchantMessage: decision.merchantMessage }
              : { kind: "payment.resolve", gid: payment.gid },
          now,
        });
      }
      const fresh = await tx.payment.findUniqueOrThrow({ where: { id: paymentId } });
      return { payment: fresh, decision, finalMessage };
    });
    if (outcome === "final") return null;
    if (outcome) {
      if (outcome.finalMessage) deps.notify?.outbox();
      return outcome;
    }
  }
  throw new Error(`payment ${paymentId} kept changing while it was being settled`);
}
