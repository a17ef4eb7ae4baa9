// What a signed notification reported since a gateway order's last read, when it is another
// status than the one stored: the payments list, a payment's page and the CSV export say it
// beside the last read's status (an AC notified after an NR read needs nothing from Shopify,
// so the payment is not settled on it, and the status shown stays the read's for up to an hour).
import type { Database } from "~/db/database.server";
import type { Payment } from "../../generated/prisma/sqlite/client";

/** A payment's newest signed notification that names a status. */
interface NewestNotification {
  status: string | null;
  receivedAt: Date;
}

type ReadPayment = Pick<Payment, "gatewayStatus" | "lastCheckedAt" | "createdAt">;

/** The order's last read, or the payment's creation before any: what a notification is newer than. */
export const lastRead = (payment: Pick<Payment, "lastCheckedAt" | "createdAt">) => payment.lastCheckedAt ?? payment.createdAt;

/**
 * Whether a notification newer than the order's last read reports another status than the one
 * stored: the payment's state and status shown are then the last read's, not the newest word.
 */
export function reportsAnotherStatus(payment: ReadPayment, newest: NewestNotification): newest is NewestNotification & { status: string } {
  return newest.status !== null && newest.receivedAt.getTime() > lastRead(payment).getTime() && newest.status !== payment.gatewayStatus;
}

/** An order's notifications are those of its gateway environment and identifier. */
const notificationKey = (gatewayEnv: string, orderId: string | null) => `${gatewayEnv} ${orderId ?? ""}`;

/**
 * For these payments (a page of the list, a batch of the export), the status code a signed
 * notification reported since each one's last read when it is another status, else null.
 * One query on the (shopId, orderId) index. It is neither bounded by the orders' last reads
 * nor sorted by the database: either makes SQLite walk the shop's notifications on its
 * (shopId, receivedAt) index instead of each order's few; the newest is picked here.
 */
export async function notifiedStatuses<P extends ReadPayment & Pick<Payment, "gatewayEnv" | "gatewayOrderId">>(
  db: Database,
  shopId: string,
  payments: readonly P[],
): Promise<(payment: P) => string | null> {
  const orderIds = payments.flatMap((payment) => (payment.gatewayOrderId === null ? [] : [payment.gatewayOrderId]));
  const rows =
    orderIds.length === 0
      ? []
      : await db.gatewayWebhook.findMany({
          where: { shopId, orderId: { in: orderIds }, status: { not: null } },
          select: { gatewayEnv: true, orderId: true, status: true, receivedAt: true },
        });
  const newest = new Map<string, NewestNotification>();
  for (const found of rows) {
    const key = notificationKey(found.gatewayEnv, found.orderId);
    const kept = newest.get(key);
    if (!kept || found.receivedAt.getTime() > kept.receivedAt.getTime()) newest.set(key, found);
  }
  return (payment) => {
    const found = newest.get(notificationKey(payment.gatewayEnv, payment.gatewayOrderId));
    return found && reportsAnotherStatus(payment, found) ? found.status : null;
  };
}
