// Telling Shopify a payment is pending (the shopper came back before the gateway finished).
import type { Payment } from "../../generated/prisma/sqlite/client";
import type { PendingReason } from "~/shopify/payments-apps/outcome";
import type { PaymentsDeps } from "./deps";
import { enqueue } from "./outbox";

/** Shopify allows a pending window of up to 3 days; the reconciler finalises before it ends. */
export const PENDING_WINDOW_MS = 71 * 3_600_000;

export async function enqueuePending(deps: PaymentsDeps, payment: Payment & { shop: { shopDomain: string } }, reason: PendingReason) {
  const now = deps.clock.now();
  return deps.db.$transaction((tx) =>
    enqueue(tx, {
      shopDomain: payment.shop.shopDomain,
      paymentId: payment.id,
      dedupeKey: `payment:${payment.id}:pending`,
      payload: { kind: "payment.pending", gid: payment.gid, reason, pendingExpiresAt: new Date(now.getTime() + PENDING_WINDOW_MS).toISOString() },
      now,
    }),
  );
}
