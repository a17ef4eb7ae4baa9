// Whether a gateway order is for what its payment asks: the fiat and the amount the app
// created it with. The app always sends both, so an order that shows others was not made
// as asked (the gateway ignored the fiat and used the device's default, say) or is not this
// payment's: paying it does not pay the payment, and a person must compare the two before
// anything ships.
import Decimal from "decimal.js";
import { fiatMinorDigits, type FiatCode } from "~/gateway/fiat-codes";

/** What an order shows of its terms: a creation answer tells the fiat only, a read the amount too. */
export interface OrderTerms {
  fiat: FiatCode;
  fiat_amount?: string;
}

/** The payment's own terms, as stored: its amount as a decimal text, its currency code. */
export interface PaymentTerms {
  amount: string;
  currency: string;
}

/**
 * Null when the order is for the payment's fiat and amount; otherwise what differs, in words
 * for the merchant. The amount is compared in the fiat's minor units: a JSON number the
 * gateway writes with float noise (49.900000000000006) is the same 49.90.
 */
export function orderTermsMismatch(order: OrderTerms, payment: PaymentTerms): string | null {
  const asked = `${payment.amount} ${payment.currency}`;
  if (order.fiat !== payment.currency.toUpperCase()) {
    const shown = order.fiat_amount === undefined ? `in ${order.fiat}` : `for ${order.fiat_amount} ${order.fiat}`;
    return `The gateway order is ${shown}, but Shopify's payment is for ${asked}.`;
  }
  if (order.fiat_amount === undefined) return null;
  const digits = fiatMinorDigits(order.fiat);
  const shown = new Decimal(order.fiat_amount).toDecimalPlaces(digits, Decimal.ROUND_HALF_UP);
  if (shown.equals(new Decimal(payment.amount))) return null;
  return `The gateway order is for ${shown.toFixed(digits)} ${order.fiat}, but Shopify's payment is for ${asked}.`;
}
