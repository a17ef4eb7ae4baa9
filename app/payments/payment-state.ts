// The payment's state machine. States only move forward (by rank); final states never
// change. Every transition the app makes goes through `nextState`.
import type { SettlementDecision } from "./status-mapping";

export const PAYMENT_STATES = ["started", "awaiting_payment", "confirming", "paid", "failed", "not_started"] as const;
export type PaymentState = (typeof PAYMENT_STATES)[number];

const rank: Record<PaymentState, number> = {
  started: 0,
  awaiting_payment: 1,
  confirming: 2,
  paid: 3,
  failed: 3,
  not_started: 3,
};

export function isPaymentState(value: string): value is PaymentState {
  return (PAYMENT_STATES as readonly string[]).includes(value);
}

export function isFinalPaymentState(state: PaymentState): boolean {
  return rank[state] === 3;
}

/**
 * Shopify's next page for the shopper once Shopify took the payment's outcome (resolved or
 * rejected), else null. It stands whatever happens to the shop afterwards, an uninstall
 * included: the order is Shopify's from then on.
 */
export function shopifyNextPage(payment: { shopifyOutcome: string | null; nextActionUrl: string | null }): string | null {
  return payment.shopifyOutcome === "resolved" || payment.shopifyOutcome === "rejected" ? payment.nextActionUrl : null;
}

/** Payments the reconciler still has to bring to an end. */
export const OPEN_PAYMENT_STATES: readonly PaymentState[] = ["started", "awaiting_payment", "confirming"];

/**
 * A rejected payment's order is read for this long after the payment began: a shopper's
 * wallet may send the crypto after the order expired (or after Shopify's window closed), and
 * the gateway records it under the order's final status without a webhook.
 */
export const LATE_PAYMENT_WATCH_MS = 7 * 24 * 3_600_000;

/**
 * A settlement from a signed notification alone that a read is still to check: unverifiedSince
 * set, written as a range (every such time is after 1970), which SQLite searches its index for,
 * where it scans every payment for IS NOT NULL.
 */
export const AWAITING_VERIFICATION = { unverifiedSince: { gt: new Date(0) } };

/** Payments not finished at the gateway, or settled from a signed notification alone that a read is still to check. */
export const PAYMENTS_IN_PROGRESS = { OR: [{ state: { in: [...OPEN_PAYMENT_STATES] } }, AWAITING_VERIFICATION] };

/** Rejected payments whose orders are still read for crypto arriving late (LATE_PAYMENT_WATCH_MS). */
export function watchedRejectedPayments(now: Date) {
  return { state: "failed", gatewayOrderId: { not: null }, unverifiedSince: null, createdAt: { gte: new Date(now.getTime() - LATE_PAYMENT_WATCH_MS) } };
}

/**
 * The payments that still need their gateway's credentials, and that the reconciler follows:
 * those in progress (their orders are read, their notifications verified), and rejected ones
 * still watched for late crypto (their orders are read, and a notification of money arriving
 * is verified). A condition on payments.
 */
export function paymentsOnCredentials(now: Date) {
  return { OR: [...PAYMENTS_IN_PROGRESS.OR, watchedRejectedPayments(now)] };
}

/** Whether a stored payment's state is one of OPEN_PAYMENT_STATES. */
export function isOpenPaymentState(state: string): boolean {
  return (OPEN_PAYMENT_STATES as readonly string[]).includes(state);
}

export function stateForDecision(decision: SettlementDecision): PaymentState | null {
  switch (decision.kind) {
    case "wait":
      return "awaiting_payment";
    case "confirming":
      return "confirming";
    case "resolve":
      return "paid";
    case "reject":
      return "failed";
    case "review":
      return null;
  }
}

/**
 * The state after `target` is proposed: the target when it is ahead, the current state
 * otherwise. A final state is never left, whatever arrives later.
 */
export function nextState(current: PaymentState, target: PaymentState | null): PaymentState {
  if (target === null || isFinalPaymentState(current)) return current;
  return rank[target] > rank[current] ? target : current;
}
