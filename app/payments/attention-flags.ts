// A flag on a payment is what a person must look at (app/admin/attention.ts words the advice).
// Raising one writes it on the payment's row, open again if an earlier one was handled, and
// one "attention" entry on its timeline: every place that raises a flag writes these two.
import type { AttentionReason } from "./status-mapping";

export interface AttentionFlag {
  reason: AttentionReason;
  detail: string;
}

/** The payment's columns that raise `flag`, open (not yet handled). */
export function flagColumns(flag: AttentionFlag): { attention: AttentionReason; attentionDetail: string; attentionResolvedAt: null } {
  return { attention: flag.reason, attentionDetail: flag.detail, attentionResolvedAt: null };
}

/** The timeline entry that records `flag` being raised at `at`. */
export function flagEvent(flag: AttentionFlag, at: Date): { type: "attention"; detail: string; at: Date } {
  return { type: "attention", detail: JSON.stringify({ reason: flag.reason, detail: flag.detail }), at };
}
