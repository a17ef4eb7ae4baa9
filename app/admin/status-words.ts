// The words the admin uses for a payment's state and its gateway status, so merchants
// never have to read two-letter codes.
import { parseGatewayStatus } from "~/gateway/statuses";
import { isPaymentState, type PaymentState } from "~/payments/payment-state";
import { paidPercentage } from "~/payment-page/progress";

export type Tone = "success" | "critical" | "warning" | "attention" | "info" | undefined;

export interface StatusWords {
  label: string;
  meaning: string;
  tone: Tone;
}

const STATE_WORDS: Record<PaymentState, StatusWords> = {
  started: { label: "Choosing a coin", meaning: "The shopper is on the payment page and has not chosen how to pay yet.", tone: "info" },
  awaiting_payment: { label: "Awaiting payment", meaning: "The gateway order exists; nothing has been received yet.", tone: "attention" },
  confirming: { label: "Confirming", meaning: "Crypto was received and is waiting for network confirmation.", tone: "warning" },
  // Whether Shopify was told, and what it answered, is the Shopify side's to say.
  paid: { label: "Paid", meaning: "The gateway confirmed the payment.", tone: "success" },
  failed: { label: "Not paid", meaning: "The payment ended without being paid (expired, cancelled, failed or short).", tone: "critical" },
  not_started: { label: "Not started", meaning: "No gateway order could be created; Shopify showed the shopper an error at checkout.", tone: undefined },
};

export const PAYMENT_STATE_OPTIONS = Object.entries(STATE_WORDS).map(([value, words]) => ({ value, label: words.label }));

/** A payment's state in words; `percentage` (the gateway's, as stored) tells a confirming payment's full amount from part of it. */
export function paymentStateWords(state: string, percentage?: string | null): StatusWords {
  if (!isPaymentState(state)) return { label: state, meaning: "A state this version of the app does not know.", tone: "warning" };
  if (state === "confirming") return { ...STATE_WORDS.confirming, meaning: confirmingMeaning(percentage) };
  return STATE_WORDS[state];
}

/**
 * What a confirming (AC) payment waits for. Any crypto seen moves the order to AC, whatever
 * its size, so only the percentage says whether the whole amount arrived; without one the
 * words claim neither.
 */
function confirmingMeaning(percentage: string | null | undefined): string {
  const paid = paidPercentage(percentage);
  if (paid === null) return "Crypto was seen at the gateway and is waiting for network confirmation.";
  if (paid.lt(100)) return `Part of the amount (${percentage} %) has arrived; the rest is due before the order expires.`;
  return STATE_WORDS.confirming.meaning;
}

const STATUS_TONE: Record<string, Tone> = { CO: "success", CM: "success", AC: "warning", PE: "attention", NR: "info", IA: "critical", OC: "critical", EX: undefined, CA: undefined, DE: undefined, FA: "critical" };

/** A gateway status code in words: "Completed", "Expired"... (null: no gateway order yet). */
export function gatewayStatusWords(code: string | null | undefined): StatusWords {
  if (!code) return { label: "No gateway order", meaning: "No order exists at the gateway for this payment.", tone: undefined };
  const parsed = parseGatewayStatus(code);
  if (!parsed.known) return { label: `Unknown status ${code}`, meaning: "The gateway reported a status this app does not know; check the order in the gateway dashboard.", tone: "warning" };
  return { label: parsed.info.name, meaning: parsed.info.meaning, tone: STATUS_TONE[parsed.code] };
}
