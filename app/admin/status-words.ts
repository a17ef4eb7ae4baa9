// The words the admin uses for a payment's state and its gateway status, so merchants
// never have to read two-letter codes.
import { parseGatewayStatus, type GatewayStatus } from "~/gateway/statuses";
import { isPaymentState, type PaymentState } from "~/payments/payment-state";
import { paidPercentage, paymentProgress } from "~/payment-page/progress";
import { formatPercentage } from "./format";

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

/** How far a confirming payment got: the gateway's percentage (as stored), and the on-chain amounts when the app holds them. */
export interface ConfirmingProgress {
  percentage?: string | null;
  cryptoAmount?: string | null;
  transactions?: readonly { amount: string }[];
}

/** A payment's state in words; `progress` tells a confirming payment's full amount from part of it. */
export function paymentStateWords(state: string, progress: ConfirmingProgress = {}): StatusWords {
  if (!isPaymentState(state)) return { label: state, meaning: "A state this version of the app does not know.", tone: "warning" };
  if (state === "confirming") return { ...STATE_WORDS.confirming, meaning: confirmingMeaning(progress) };
  return STATE_WORDS[state];
}

/**
 * What a confirming (AC) payment waits for. Any crypto seen moves the order to AC, whatever
 * its size. The on-chain amounts decide whether the whole amount arrived, as on the shopper's
 * page (the gateway's percentage is rounded: one unit short still reads 100.0); before they
 * are known the percentage does, and without either the words claim neither.
 */
function confirmingMeaning({ percentage, cryptoAmount, transactions = [] }: ConfirmingProgress): string {
  const partly = (shown: string) => `Part of the amount (${shown}) has arrived; the rest is due before the order expires.`;
  const progress = paymentProgress(cryptoAmount ?? null, transactions);
  if (progress) return progress.remaining.gt(0) ? partly(`${progress.received.toFixed()} of ${cryptoAmount}`) : STATE_WORDS.confirming.meaning;
  const paid = paidPercentage(percentage);
  if (paid === null) return "Crypto was seen at the gateway and is waiting for network confirmation.";
  if (paid.lt(100)) return partly(formatPercentage(percentage));
  return STATE_WORDS.confirming.meaning;
}

// Every status has its tone: a new one fails to compile until it has.
const STATUS_TONE: Record<GatewayStatus, Tone> = { CO: "success", CM: "success", AC: "warning", PE: "attention", NR: "info", IA: "critical", OC: "critical", EX: undefined, CA: undefined, DE: undefined, FA: "critical" };

/** Statuses whose meaning says the order got nothing: the gateway keeps them when crypto arrives after the order ended, too. */
const ENDED_WITHOUT_FUNDS: ReadonlySet<GatewayStatus> = new Set<GatewayStatus>(["EX", "CA"]);

/**
 * A gateway status code in words: "Completed", "Expired"... (null: no gateway order yet).
 * `fundsSeen`: the order shows crypto (transactions, a percentage paid); an expired or cancelled
 * order that received crypto late keeps its status, whose own meaning ("nothing received") no
 * longer holds.
 */
export function gatewayStatusWords(code: string | null | undefined, { fundsSeen = false }: { fundsSeen?: boolean } = {}): StatusWords {
  if (!code) return { label: "No gateway order", meaning: "No order exists at the gateway for this payment.", tone: undefined };
  const parsed = parseGatewayStatus(code);
  if (!parsed.known) return { label: `Unknown status ${code}`, meaning: "The gateway reported a status this app does not know; check the order in the gateway dashboard.", tone: "warning" };
  if (fundsSeen && ENDED_WITHOUT_FUNDS.has(parsed.code)) {
    return {
      label: parsed.info.name,
      meaning: "The order ended unpaid, yet holds crypto the shopper sent (see Transactions): it is the shopper's, to refund from the gateway dashboard.",
      tone: "critical",
    };
  }
  return { label: parsed.info.name, meaning: parsed.info.meaning, tone: STATUS_TONE[parsed.code] };
}
