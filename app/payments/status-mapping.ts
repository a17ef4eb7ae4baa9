// The one status mapping: what a gateway order status means for the Shopify payment
// session. Pure and exhaustive; every other module asks this one.
import type { GatewayOrder } from "~/gateway/schemas";
import type { ParsedGatewayStatus, GatewayStatus } from "~/gateway/statuses";
import { paidPercentage, paymentProgress } from "~/payment-page/progress";
import type { PaymentSessionRejectionCode, PendingReason } from "~/shopify/payments-apps/outcome";

export type AttentionReason =
  | "underpaid"
  | "overpaid"
  | "out_of_condition"
  | "late_payment"
  | "paid_after_void"
  | "paid_twice"
  | "unknown_status"
  | "shopify_error"
  | "pending_window_expired"
  | "webhook_mismatch"
  | "amount_mismatch";

export type SettlementDecision =
  /** Nothing to tell Shopify yet; a returning shopper is told "pending" with this reason. */
  | { kind: "wait"; pendingReason: PendingReason }
  /** Money seen on-chain, waiting for confirmation. */
  | { kind: "confirming"; pendingReason: "NETWORK_ACTION_REQUIRED" }
  | { kind: "resolve" }
  | { kind: "reject"; code: PaymentSessionRejectionCode; merchantMessage: string; attention?: AttentionReason }
  /**
   * Never treated as paid, left for a person: a status this app does not know, or an order on
   * its way to paid or paid that is not for the payment's fiat and amount (order-terms).
   */
  | { kind: "review"; attention: "unknown_status" | "amount_mismatch"; detail: string };

function assertUnreachable(value: never): never {
  throw new Error(`Unhandled gateway status: ${String(value)}`);
}

export function decideForGatewayStatus(status: GatewayStatus): SettlementDecision {
  switch (status) {
    case "NR":
    case "PE":
      return { kind: "wait", pendingReason: "BUYER_ACTION_REQUIRED" };
    case "AC":
      return { kind: "confirming", pendingReason: "NETWORK_ACTION_REQUIRED" };
    case "CO":
    case "CM":
      return { kind: "resolve" };
    case "EX":
      return { kind: "reject", code: "CANCELLED_PAYMENT", merchantMessage: "The crypto payment expired before the shopper paid." };
    case "CA":
      return { kind: "reject", code: "CANCELLED_PAYMENT", merchantMessage: "The crypto payment was cancelled: no currency was chosen or nothing was paid within 24 hours." };
    case "DE":
      return { kind: "reject", code: "CANCELLED_PAYMENT", merchantMessage: "The crypto payment order was deleted at the gateway." };
    case "FA":
      return { kind: "reject", code: "PROCESSING_ERROR", merchantMessage: "The crypto transaction failed or was not confirmed on-chain." };
    case "IA":
      return {
        kind: "reject",
        code: "INSUFFICIENT_FUNDS",
        merchantMessage: "The shopper sent less than the amount due. The crypto received is held at the gateway: refund it from the gateway dashboard or contact the shopper.",
        attention: "underpaid",
      };
    case "OC":
      return {
        kind: "reject",
        code: "PROCESSING_ERROR",
        merchantMessage: "The payment arrived after the rate window and no longer covers the order. The crypto received is held at the gateway: refund it from the gateway dashboard or contact the shopper.",
        attention: "out_of_condition",
      };
    default:
      return assertUnreachable(status);
  }
}

export function decideForParsedStatus(status: ParsedGatewayStatus): SettlementDecision {
  if (!status.known) {
    return { kind: "review", attention: "unknown_status", detail: `The gateway reported an unknown status "${status.code}".` };
  }
  return decideForGatewayStatus(status.code);
}

/**
 * The decision for an order whose terms differ from its payment's (`mismatch`: what differs,
 * null when nothing does): paying it does not pay the payment, so an order on its way to paid
 * or paid is left for a person instead. Waiting and rejecting stay as they are: neither tells
 * Shopify the payment was made.
 */
export function decideForOrderTerms(decision: SettlementDecision, mismatch: string | null): SettlementDecision {
  if (mismatch === null || (decision.kind !== "resolve" && decision.kind !== "confirming")) return decision;
  return { kind: "review", attention: "amount_mismatch", detail: mismatch };
}

/** Whether a gateway status shows that crypto was received (so a late one needs a person). */
export function statusShowsFundsReceived(status: GatewayStatus): boolean {
  return status === "AC" || status === "CO" || status === "CM" || status === "IA" || status === "OC";
}

/**
 * What a person must know of an order that passed its amount, or null when it did not. The
 * gateway ends an overpaid order CO like an exact one, so only its amounts tell: the on-chain
 * transactions against the crypto amount once they are known, its percentage (above 100)
 * before. The payment is paid all the same; the extra is the shopper's.
 */
export function overpaymentDetail(order: Pick<GatewayOrder, "crypto_amount" | "currency_id" | "percentage" | "transactions">): string | null {
  const progress = paymentProgress(order.crypto_amount, order.transactions);
  const percentage = paidPercentage(order.percentage);
  const over = progress ? progress.excess.gt(0) : (percentage?.gt(100) ?? false);
  if (!over) return null;
  const coin = order.currency_id ? ` ${order.currency_id}` : "";
  const shown = percentage?.gt(100) ? `the gateway shows ${order.percentage}% paid` : null;
  const howMuch = progress
    ? `${progress.received.toFixed()}${coin} arrived for the ${order.crypto_amount}${coin} asked: ${progress.excess.toFixed()}${coin} more than was due${shown ? ` (${shown})` : ""}.`
    : `More than was due arrived: ${shown}.`;
  return `The shopper sent more than the order's amount. ${howMuch} The order is paid; the extra belongs to the shopper. A refund from the gateway dashboard returns the full amount, not the extra alone: return the extra another way, as agreed with the shopper.`;
}
