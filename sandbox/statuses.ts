// The payment status codes and which of them are final.
export const ORDER_STATUSES = ["NR", "PE", "AC", "IA", "CO", "CA", "EX", "OC", "FA", "DE", "CM"] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

const OPEN: ReadonlySet<OrderStatus> = new Set(["NR", "PE", "AC"]);

export function isFinalStatus(status: OrderStatus): boolean {
  return !OPEN.has(status);
}

export function isOrderStatus(value: string): value is OrderStatus {
  return (ORDER_STATUSES as readonly string[]).includes(value);
}
