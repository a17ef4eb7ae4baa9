// What each attention flag means for the merchant and what they should do about it.
import type { AttentionReason } from "~/payments/status-mapping";

export interface AttentionAdvice {
  title: string;
  whatToDo: string;
}

export const ATTENTION_ADVICE: Record<AttentionReason, AttentionAdvice> = {
  underpaid: {
    title: "Shopper paid too little",
    whatToDo:
      "The order was not marked as paid. The crypto received is held at the gateway: refund it from the gateway dashboard, or contact the shopper to agree on the rest and create the order by hand.",
  },
  overpaid: {
    title: "Shopper paid more than was due",
    whatToDo:
      "The order is paid, and Shopify is told so as usual: nothing changes there. The extra crypto belongs to the shopper. Do not refund it from the gateway dashboard: a refund there returns the full amount (a voucher for the whole order), not the extra alone. Agree with the shopper how to return the extra (a transfer, or store credit).",
  },
  out_of_condition: {
    title: "Paid after the rate window",
    whatToDo:
      "The payment arrived after the quoted rate expired and no longer covers the order. Refund it from the gateway dashboard or contact the shopper.",
  },
  late_payment: {
    title: "Money arrived after the payment was rejected",
    whatToDo:
      "Shopify already shows this payment as not paid. Refund the crypto from the gateway dashboard, or arrange the order with the shopper.",
  },
  // Crypto the gateway showed when Shopify voided the authorization, or paid to its order afterwards.
  paid_after_void: {
    title: "Crypto for a voided authorization",
    whatToDo:
      "Shopify voided this authorization, and crypto arrived at the gateway for it, before or after the void. Do not ship on it: the crypto is the shopper's. Refund it from the gateway dashboard, or agree with the shopper on a new order.",
  },
  paid_twice: {
    title: "Shopper paid this checkout twice",
    whatToDo:
      "The shopper paid a second crypto order for a checkout whose first crypto payment Shopify had already accepted. Shopify can take only one, so this second payment was marked as not paid there, and the order stands on the first. The crypto of this second payment is the shopper's: refund it from the gateway dashboard (that refunds this order only, in full).",
  },
  unknown_status: {
    title: "Unknown gateway status",
    whatToDo: "The gateway reported something this app cannot interpret. Open the order in the gateway dashboard and decide by hand; the app never treats it as paid, and refuses to capture an authorization while the order shows such a status and this flag is open.",
  },
  shopify_error: {
    title: "Shopify refused an update",
    whatToDo:
      "Shopify did not accept the payment's outcome, or the app's answer to a capture, void or refund it asked for. Check the order in Shopify and the details below. When Shopify refused the app's access or a permission, the app keeps trying, at most 10 minutes apart: once it is granted, press Check now on the payment to send it at once.",
  },
  webhook_mismatch: {
    title: "Gateway record disagrees with its webhook",
    whatToDo:
      "A signed webhook from the gateway settled this payment, but the gateway's order now shows something else. Compare the order in the gateway dashboard with Shopify before shipping, and refund or cancel by hand if the order was not paid. The app refuses to capture an authorization while this flag is open.",
  },
  amount_mismatch: {
    title: "Gateway order is for another amount",
    whatToDo:
      "The gateway's order for this payment is not for the amount or currency of Shopify's payment, so the app does not mark the payment paid on it, whatever the gateway reports. Compare the order in the gateway dashboard with Shopify before shipping: refund any crypto received from the gateway dashboard, or agree with the shopper how to settle the difference.",
  },
  pending_window_expired: {
    title: "Pending too long",
    whatToDo:
      "The gateway had not completed the payment before Shopify's 3-day pending window closed, so the order was marked as not paid. Check the order in the gateway dashboard; any crypto received must be refunded there.",
  },
};

export function attentionAdvice(reason: string): AttentionAdvice {
  return Object.hasOwn(ATTENTION_ADVICE, reason)
    ? ATTENTION_ADVICE[reason as AttentionReason]
    : { title: reason, whatToDo: "Check this payment in the gateway dashboard and in Shopify." };
}
