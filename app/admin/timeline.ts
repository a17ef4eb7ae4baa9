// A payment's timeline in words: each stored PaymentEvent (gateway statuses, state
// changes, Shopify's answers, the shopper's moves) becomes a title and a sentence.
// Event details are JSON written by the app itself, still parsed defensively.
import Decimal from "decimal.js";
import { z } from "zod";
import { isDecimalText } from "~/gateway/money";
import type { SettleSource } from "~/payments/settle-payment";
import { CUSTOMER_DATA_ERASED } from "~/payments/retention";
import { followUpAnswerOf } from "~/payments/shopify-requests";
import { asSentence, endsSentence } from "~/lib/text";
import { parseStoredJson } from "~/lib/stored-json";
import { attentionAdvice } from "./attention";
import { formatMoney, formatPercentage } from "./format";
import { gatewayStatusWords, paymentStateWords } from "./status-words";

export interface TimelineEntry {
  title: string;
  description: string;
}

/** A field of an event's detail: one that is missing or of another shape reads as absent, and the rest of the detail still reads. */
const field = <T extends z.ZodTypeAny>(schema: T) => schema.optional().catch(undefined);

const detailSchema = z
  .object({
    amount: field(z.string()),
    currency: field(z.string()),
    test: field(z.boolean()),
    env: field(z.string()),
    page: field(z.string()),
    // An HTTP status in a session's answer; a gateway status code in "verified".
    status: field(z.union([z.number(), z.string()])),
    reason: field(z.string()),
    // The gateway's own words for refusing an order or a coin.
    cause: field(z.string()),
    // Which of a coin's amount limits the gateway's refusal of it named ("none_named": none).
    limit: field(z.string()),
    from: field(z.string().nullable()),
    to: field(z.string()),
    source: field(z.string()),
    // Null when the read did not report one (the gateway's older order shape).
    percentage: field(z.string().nullable()),
    detail: field(z.string()),
    state: field(z.string().nullable()),
    alreadyInState: field(z.boolean()),
    call: field(z.string()),
    message: field(z.string()),
    retrying: field(z.boolean()),
    answer: field(z.string()),
    // A follow-up request's answer was queued for Shopify (the outbox then records what Shopify did with it).
    queued: field(z.boolean()),
    // A refund of a payment whose gateway order showed no crypto received (false), and that order's status.
    received: field(z.boolean()),
    gatewayStatus: field(z.string().nullable()),
    session: field(z.string()),
    gatewayOrderId: field(z.string()),
    adopted: field(z.boolean()),
    unreachableOrder: field(z.string()),
    // The Shopify payment of the same checkout that was accepted before this one was rejected.
    paidTwice: field(z.string()),
    // How long customer details were kept before they were erased.
    days: field(z.number().int()),
  })
  .passthrough();
type Detail = z.infer<typeof detailSchema>;

// Every source a settlement records has words: a new one fails to compile until it has them.
const SOURCE_WORDS: Record<SettleSource | "pending_window", string> = {
  webhook: "a gateway notification",
  signed_webhook: "a signed gateway notification, trusted without reading the order",
  return: "the shopper's return",
  reconcile: "the periodic check",
  check: "a manual check",
  create: "the order creation",
  pending_window: "the end of Shopify's pending window",
};

const STATE_CHANGE_WORDS: Record<string, string> = {
  awaiting_payment: "Waiting for the shopper to pay.",
  // The event does not say how much arrived (the gateway status entry next to it does).
  confirming: "Crypto was seen at the gateway; waiting for network confirmation.",
  paid: "The gateway confirmed the payment; Shopify is told it is paid.",
  failed: "The payment ended without being paid; Shopify is told so.",
  not_started: "No gateway order was created.",
};

function parseDetail(text: string): Detail {
  return parseStoredJson(detailSchema, text) ?? {};
}

const sourceWords = (source: string) => (source in SOURCE_WORDS ? SOURCE_WORDS[source as keyof typeof SOURCE_WORDS] : source);

const via = (source: string | undefined) => (source ? ` (seen through ${sourceWords(source)})` : "");

/** The payment the events belong to: older follow-up requests store their amount without its currency, which is the payment's. */
export interface EventPayment {
  currency: string;
  /** The payment's amount: a refund asked for less is a part, which the gateway cannot refund. */
  amount?: string;
}

/**
 * The app's answer to a capture, refund or void Shopify asked for, as recorded ("capture.resolve",
 * "refund.reject"...). `queued`: the answer went to the outbox, and a later entry tells what Shopify
 * did with it (entries recorded before that say only what the app answered).
 */
function answerWords(answer: string | undefined, queued: boolean | undefined): string {
  if (answer?.endsWith(".resolve")) return queued ? " The app accepted it and queued its answer for Shopify." : " The app accepted it.";
  if (answer?.endsWith(".reject")) return queued ? " The app refused it and queued its answer for Shopify, which shows the merchant why." : " The app refused it; Shopify shows the merchant why.";
  return "";
}

/** The amount Shopify asked for, in the currency it asked in (older entries: the payment's). */
function requestedAmount(d: Detail, payment: EventPayment | undefined): string {
  return d.amount ? formatMoney(d.amount, d.currency ?? payment?.currency) : "?";
}

/**
 * How to return the money a refund asked for: the gateway has no refund API, and its dashboard
 * refunds a payment only in full (a voucher for the whole amount), so a part is returned
 * another way. Unknown amounts get both ways.
 */
function refundAdvice(d: Detail, payment: EventPayment | undefined): string {
  if (d.received === false) {
    const status = d.gatewayStatus ? ` (status ${d.gatewayStatus})` : "";
    return `The gateway's record of this payment shows no crypto received${status}: there is nothing at the gateway to refund. Compare the order in the gateway dashboard; if the shopper sent nothing, record the refund in Shopify as a manual refund, which returns no money.`;
  }
  const part = "return that part to the shopper another way, then record it in Shopify as a manual refund";
  const whole = "refund the payment once from the gateway dashboard (it sends the shopper a voucher for the whole amount)";
  const total = payment?.amount && isDecimalText(payment.amount) && (d.currency ?? payment.currency) === payment.currency ? new Decimal(payment.amount) : null;
  const asked = d.amount && isDecimalText(d.amount) ? new Decimal(d.amount) : null;
  if (total === null || asked === null) return `The gateway has no refund API and refunds only in full: for the whole payment, ${whole}; for a part, ${part}.`;
  return asked.lt(total) ? `The gateway refunds a payment only in full: ${part}.` : `The gateway has no refund API: ${whole}.`;
}

/** What Shopify did with the app's answer to a refund, capture or void ("shopify_answered"). */
const ANSWERED_WORDS: Record<string, TimelineEntry> = {
  "capture.resolve": { title: "Shopify: capture made", description: "Shopify took the app's answer: the authorization is captured." },
  "capture.reject": { title: "Shopify: capture refused", description: "Shopify took the app's refusal and shows the merchant why; nothing was captured." },
  "void.resolve": { title: "Shopify: authorization voided", description: "Shopify took the app's answer: the authorization is voided, and the app refuses any later capture of it." },
  "void.reject": { title: "Shopify: void refused", description: "Shopify took the app's refusal and shows the merchant why; the authorization stands." },
  "refund.resolve": { title: "Shopify: refund made", description: "Shopify took the app's answer: the refund is recorded." },
  "refund.reject": { title: "Shopify: refund refused", description: "Shopify took the app's refusal and shows the merchant why, and how to return the money instead." },
};

function answeredEntry(d: Detail): TimelineEntry {
  const entry = ANSWERED_WORDS[d.call ?? ""] ?? { title: "Shopify took the app's answer", description: "Shopify took the app's answer to a request it made." };
  return d.alreadyInState ? { ...entry, description: `${entry.description} Shopify already had it in that state.` } : entry;
}

/** Shopify refused a call: the payment's own, or the app's answer to a refund, capture or void (which then stays open in Shopify while the app retries). */
function refusedEntry(d: Detail): TimelineEntry {
  const message = d.message ? asSentence(d.message) : "Shopify did not accept the call.";
  const retrying = d.retrying ? " The app keeps trying, at most 10 minutes apart." : "";
  const followUp = followUpAnswerOf(d.call);
  if (!followUp) return { title: "Shopify refused an update", description: `${message}${retrying}` };
  const answered = `The app ${followUp.accepted ? "accepted" : "refused"} the ${followUp.request} Shopify asked for, and Shopify refused the call that tells it so`;
  const open = d.retrying ? `: the ${followUp.request} stays open in Shopify until the call gets through.` : `: check the ${followUp.request} in Shopify.`;
  return { title: `Shopify refused the app's answer to a ${followUp.request}`, description: `${answered}${open} ${message}${retrying}` };
}

function verifiedDescription(d: Detail): string {
  const read = d.source ? `The gateway order was read through ${sourceWords(d.source)}` : "The gateway order was read";
  const shows = typeof d.status === "string" ? ` and shows ${gatewayStatusWords(d.status).label}` : "";
  return `${read}${shows}: it agrees with the notification that settled the payment.`;
}

/** The gateway's words, quoted, ending a sentence: ': "Amount … USD."', or "." without them. */
function quotedCause(cause: string | undefined): string {
  if (!cause) return ".";
  return `: "${cause}"${endsSentence(cause) ? "" : "."}`;
}

/** Why no gateway order could be made for a session, as the event recorded it. */
function refusalWords(d: Detail): string {
  const cause = quotedCause(d.cause);
  switch (d.reason) {
    case undefined:
      return "No gateway order was created.";
    case "rejected":
      return `The gateway refused the order${cause}`;
    case "invalid_request":
      return `The order was not sent: it broke a rule of the gateway's API${cause}`;
    case "unauthorized":
      return "The gateway refused the shop's device key: check the gateway connection in the app.";
    default:
      return `The gateway refused the order (${d.reason})${cause}`;
  }
}

export function describeEvent(type: string, detailText: string, payment?: EventPayment): TimelineEntry {
  const d = parseDetail(detailText);
  switch (type) {
    case "session_received":
      return {
        title: "Shopify started the payment",
        description: `Payment session for ${d.amount ?? "?"} ${d.currency ?? ""}${d.test ? ", a test payment (gateway sandbox)" : ""}.`.replace(/ +\./, "."),
      };
    case "sent_to_payment_page":
      return {
        title: "Shopper sent to the app's payment page",
        description: d.unreachableOrder
          ? `The gateway made an order without a coin (${d.unreachableOrder}) but never returned its page; it takes no money and the gateway cancels it. The shopper chooses the coin on the app's page, and the order is created then.`
          : "The shopper chooses the coin there; the gateway order is created then.",
      };
    case "order_created":
      return {
        title: "Gateway order created",
        description: d.currency ? `The shopper chose ${d.currency} on the app's payment page.` : d.adopted ? "An order created earlier was found at the gateway and kept." : "The shopper was sent to the gateway's payment page.",
      };
    case "session_refused":
      return { title: "Payment could not start", description: `${refusalWords(d)} Shopify got an error answer and showed the shopper an error at checkout, where they can try again or pay another way.` };
    case "coin_refused": {
      const forAmount = d.limit !== "none_named";
      return {
        title: `Coin refused for this ${forAmount ? "amount" : "payment"}${d.currency ? `: ${d.currency}` : ""}`,
        description: `The shopper picked ${d.currency ?? "a coin"} on the app's payment page; the gateway refused it${forAmount ? " for this amount" : ""}${quotedCause(d.cause)} It is no longer offered for this payment.`,
      };
    }
    case "gateway_status": {
      const to = gatewayStatusWords(d.to);
      const from = d.from ? gatewayStatusWords(d.from).label : null;
      const paid = d.percentage ? ` ${formatPercentage(d.percentage)} paid.` : "";
      return { title: `Gateway: ${to.label}`, description: `${from ? `From ${from} to ${to.label}` : to.label}${via(d.source)}. ${to.meaning}${paid}` };
    }
    case "state":
      return { title: `Payment: ${paymentStateWords(d.to ?? "").label.toLowerCase()}`, description: `${STATE_CHANGE_WORDS[d.to ?? ""] ?? "The payment changed state."}${via(d.source)}` };
    case "attention":
      return { title: `Needs attention: ${attentionAdvice(d.reason ?? "").title}`, description: d.detail ?? attentionAdvice(d.reason ?? "").whatToDo };
    case "attention_handled":
      return { title: "Marked as handled", description: "The merchant marked this payment's attention flag as handled." };
    case "shopify_resolved":
      return { title: "Shopify: marked as paid", description: d.alreadyInState ? "Shopify already had it as paid." : "Shopify accepted the payment; the order is paid." };
    case "shopify_rejected":
      if (d.paidTwice) {
        return { title: "Shopify: marked as not paid", description: `Another crypto payment of this checkout (Shopify payment ${d.paidTwice}) was already accepted, so Shopify was told this one failed.` };
      }
      return { title: "Shopify: marked as not paid", description: d.alreadyInState ? "Shopify already had it as not paid." : "Shopify was told the payment failed; the shopper can choose another way to pay." };
    case "shopify_pending":
      return { title: "Shopify: payment pending", description: "The shopper returned before the payment finished; Shopify shows the order as pending until the gateway completes it." };
    case "shopify_refused":
      return refusedEntry(d);
    case "shopify_answered":
      return answeredEntry(d);
    case "refund_requested":
      return {
        title: "Refund requested in Shopify",
        description: `A refund of ${requestedAmount(d, payment)} was asked.${answerWords(d.answer, d.queued)} ${refundAdvice(d, payment)}`,
      };
    case "capture_requested":
      return { title: "Capture requested in Shopify", description: `A capture of ${requestedAmount(d, payment)} was asked.${answerWords(d.answer, d.queued)}` };
    case "void_requested":
      return { title: "Void requested in Shopify", description: `Shopify asked to void the authorization.${answerWords(d.answer, d.queued)}` };
    case "verified":
      return { title: "Gateway order verified", description: verifiedDescription(d) };
    case "shopper_abandoned":
      return { title: "Shopper left the payment page", description: "The shopper chose to pay another way and was sent back to Shopify's checkout." };
    case "abandoned":
      return { title: "Payment abandoned", description: d.reason ? `Closed: ${d.reason}.` : "No gateway order was confirmed." };
    case CUSTOMER_DATA_ERASED:
      return {
        title: "Customer details erased",
        description: `The shopper's name, e-mail, phone and billing address were erased ${d.days ? `${d.days} days` : "a while"} after the payment ended, as the app's data retention says. The amounts, the gateway order and its transactions stay.`,
      };
    default:
      return { title: type.replace(/_/g, " "), description: "" };
  }
}
