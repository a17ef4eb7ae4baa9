// Telling Shopify a payment is pending (the shopper came back before the gateway finished).
import type { Payment } from "../../generated/prisma/sqlite/client";
import { isUniqueViolation } from "~/db/prisma-errors";
import type { PendingReason } from "~/shopify/payments-apps/outcome";
import type { PaymentsDeps } from "./deps";
import { enqueue } from "./outbox";

/**
 * Shopify allows a pending window of up to 3 days; the reconciler finalises before it ends.
 * Counted from the payment's creation (Shopify's payment session), as the reconciler counts.
 */
export const PENDING_WINDOW_MS = 71 * 3_600_000;

/**
 * Queues the payment's one "pending" call (the first reason given stands); the call already
 * queued when there is one. It expires with the payment's window: a shopper returning two days
 * in does not have Shopify told three more days, which the reconciler would cut short.
 */
export async function enqueuePending(deps: PaymentsDeps, payment: Payment & { shop: { shopDomain: string } }, reason: PendingReason) {
  const now = deps.clock.now();
  const dedupeKey = `payment:${payment.id}:pending`;
  try {
    return await deps.db.$transaction((tx) =>
      enqueue(tx, {
        shopDomain: payment.shop.shopDomain,
        paymentId: payment.id,
        dedupeKey,
        payload: { kind: "payment.pending", gid: payment.gid, reason, pendingExpiresAt: new Date(payment.createdAt.getTime() + PENDING_WINDOW_MS).toISOString() },
        now,
      }),
    );
  } catch (error) {
    // Two returns at once (a double click, a browser's retry): the other one queued it first.
    if (!isUniqueViolation(error)) throw error;
    return deps.db.outboxMessage.findUniqueOrThrow({ where: { dedupeKey } });
  }
}
