// The amounts derived from an order's transactions, computed in one place so
// the API, the webhook and the payment page always agree: unconfirmed,
// confirmed and received crypto, the percentage paid, its fiat value and the
// safe flag.
import { Dec } from "./decimal.js";
import type { OrderRecord, TransactionRecord } from "./store.js";

export interface OrderFigures {
  unconfirmed: Dec;
  confirmed: Dec;
  received: Dec;
  /** Percent of crypto_amount received, two decimals (may pass 100 on an overpayment). */
  percentage: Dec;
  /** Fiat value of what was received at the order's fixed rate, two decimals. */
  receivedFiat: Dec;
  /** At least one transaction and every transaction has a block confirmation. */
  safe: boolean;
}

export function orderFigures(order: OrderRecord, transactions: readonly TransactionRecord[]): OrderFigures {
  let unconfirmed = new Dec(0);
  let confirmed = new Dec(0);
  for (const t of transactions) {
    if (t.confirmed) confirmed = confirmed.plus(t.amount);
    else unconfirmed = unconfirmed.plus(t.amount);
  }
  const received = confirmed.plus(unconfirmed);
  const expected = order.cryptoAmount === null ? null : new Dec(order.cryptoAmount);
  const ratio = expected === null || expected.isZero() ? new Dec(0) : received.div(expected);
  return {
    unconfirmed,
    confirmed,
    received,
    percentage: ratio.times(100).toDecimalPlaces(2, Dec.ROUND_HALF_UP),
    receivedFiat: ratio.times(order.fiatAmount).toDecimalPlaces(2, Dec.ROUND_HALF_UP),
    safe: transactions.length > 0 && transactions.every((t) => t.confirmed),
  };
}
