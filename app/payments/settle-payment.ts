// Settles a payment from an authoritative read of its gateway order: records what the
// gateway says, moves the state machine forward (never back), flags what a person must
// see, and stores the one final Shopify call (resolve or reject) in the outbox, exactly
// once per payment whatever order reads arrive in and however many instances run.
import type { GatewayOrder } from "~/gateway/schemas";
import type { Payment, Prisma } from "../../generated/prisma/sqlite/client";
import type { PaymentsDeps } from "./deps";
import type { OutboxMessage } from "../../generated/prisma/sqlite/client";
import { enqueue } from "./outbox";
import { isPaymentState, nextState, stateForDecision, type PaymentState } from "./payment-state";
import { decideForParsedStatus, type AttentionReason, type SettlementDecision } from "./status-mapping";

export type SettleSource = "webhook" | "return" | "reconcile" | "check" | "create";

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

export async function settleFromGatewayOrder(deps: PaymentsDeps, paymentId: string, order: GatewayOrder, source: SettleSource): Promise<SettleResult> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const outcome = await deps.db.$transaction(async (tx) => {
      const payment = await tx.payment.findUnique({ where: { id: paymentId }, include: { shop: true } });
      if (!payment) throw new Error(`payment ${paymentId} not found`);
      if (payment.gatewayOrderId && payment.gatewayOrderId !== order.identifier) {
        throw new PaymentOrderMismatchError(`payment ${paymentId} belongs to another gateway order`);
      }
      const now = deps.clock.now();
      const current = stateOf(payment);
      const decision = decideForParsedStatus(order.status);
      const next = nextState(current, stateForDecision(decision));
      const knownTransactions = await tx.paymentTransaction.count({ where: { paymentId } });
      const attention = attentionFor(payment, current, order, decision, knownTransactions);
      const statusChanged = payment.gatewayStatus !== order.status.code;

      const data: Prisma.PaymentUpdateManyMutationInput = {
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
        ...(attention ? { attention: attention.reason, attentionDetail: attention.detail, attentionResolvedAt: null } : {}),
      };
      // Optimistic concurrency: only the writer that saw the current state moves it.
      const updated = await tx.payment.updateMany({
        where: { id: paymentId, state: current, updatedAt: payment.updatedAt },
        data: { ...data, ...(payment.gatewayOrderId ? {} : { gatewayOrderId: order.identifier }) },
      });
      if (updated.count !== 1) return null;

      if (statusChanged) {
        await tx.paymentEvent.create({
          data: { paymentId, type: "gateway_status", detail: JSON.stringify({ from: payment.gatewayStatus, to: order.status.code, source, percentage: order.percentage }), at: now },
        });
      }
      if (next !== current) {
        await tx.paymentEvent.create({ data: { paymentId, type: "state", detail: JSON.stringify({ from: current, to: next, source }), at: now } });
      }
      if (attention) {
        await tx.paymentEvent.create({ data: { paymentId, type: "attention", detail: JSON.stringify(attention), at: now } });
      }
      for (const transaction of order.transactions) {
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
    if (outcome) {
      if (outcome.finalMessage) deps.notify?.outbox();
      return outcome;
    }
  }
  throw new Error(`payment ${paymentId} kept changing while it was being settled`);
}
