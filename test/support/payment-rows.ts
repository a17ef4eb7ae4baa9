// A payment row as tests store one directly: a 49.90 EUR test payment of the gateway sandbox,
// awaiting payment, unless the given columns say otherwise. Each gets its own Shopify ids.
import { randomUUID } from "node:crypto";
import type { Prisma } from "../../generated/prisma/sqlite/client";

/** The fiat and amount of a payment stored by paymentColumns, unless its columns say otherwise. */
export const DEFAULT_PAYMENT_TERMS = { amount: "49.90", currency: "EUR" } as const;

export function paymentColumns(shopId: string, columns: Partial<Prisma.PaymentUncheckedCreateInput> = {}): Prisma.PaymentUncheckedCreateInput {
  const key = randomUUID();
  return {
    shopId,
    shopifyPaymentId: key,
    gid: `gid://shopify/PaymentSession/${key}`,
    groupId: `group-${key}`,
    ...DEFAULT_PAYMENT_TERMS,
    test: true,
    kind: "sale",
    cancelUrl: "https://shop.example/cancel",
    gatewayEnv: "sandbox",
    state: "awaiting_payment",
    ...columns,
  };
}
