// Decides what a mutation's userErrors mean for the caller. A session Shopify returns in the
// state we asked for is a success (Shopify's "already done"), whatever the errors say;
// a session in a conflicting final state, or any other user error, is a failure that the
// merchant must see. So is a refusal that returns no session: its words alone cannot tell
// which session they are about (Shopify refuses a second payment of one checkout with
// "another payment session of this checkout has already been resolved"), and a repeated
// call on a session already in that state is answered with no user errors at all.

import type { PaymentsAppsMutationName } from "./documents";
import type { MutationOutcome, PaymentsAppsUserError, SessionState, SessionStateCode } from "./outcome";

export type UserErrorClassification =
  | { ok: true; alreadyInState: boolean }
  | {
      ok: false;
      kind: "conflicting_state" | "not_found" | "user_error";
      /** For the merchant: what Shopify refused and why. */
      message: string;
      currentState: SessionState | null;
      userErrors: PaymentsAppsUserError[];
    };

const REQUESTED_STATE: Record<PaymentsAppsMutationName, SessionStateCode | null> = {
  PaymentSessionResolve: "RESOLVED",
  PaymentSessionReject: "REJECTED",
  PaymentSessionPending: "PENDING",
  RefundSessionResolve: "RESOLVED",
  RefundSessionReject: "REJECTED",
  CaptureSessionResolve: "RESOLVED",
  CaptureSessionReject: "REJECTED",
  VoidSessionResolve: "RESOLVED",
  VoidSessionReject: "REJECTED",
  PaymentsAppConfigure: null,
};

const SESSION_NOUN: Record<PaymentsAppsMutationName, string> = {
  PaymentSessionResolve: "payment session",
  PaymentSessionReject: "payment session",
  PaymentSessionPending: "payment session",
  RefundSessionResolve: "refund session",
  RefundSessionReject: "refund session",
  CaptureSessionResolve: "capture session",
  CaptureSessionReject: "capture session",
  VoidSessionResolve: "void session",
  VoidSessionReject: "void session",
  PaymentsAppConfigure: "payments app configuration",
};

export function classifyUserErrors(outcome: MutationOutcome): UserErrorClassification {
  if (outcome.userErrors.length === 0) return { ok: true, alreadyInState: false };

  const requested = REQUESTED_STATE[outcome.operation];
  const current = outcome.state;
  const shopifySays = outcome.userErrors.map((e) => e.message).join("; ");
  const noun = SESSION_NOUN[outcome.operation];

  if (requested !== null && current?.code === requested) return { ok: true, alreadyInState: true };

  if (requested !== null && current !== null && (current.code === "RESOLVED" || current.code === "REJECTED")) {
    return {
      ok: false,
      kind: "conflicting_state",
      message: `The ${noun} is already ${current.code.toLowerCase()}, so it cannot be ${describeRequest(requested)}. Shopify said: ${shopifySays}`,
      currentState: current,
      userErrors: outcome.userErrors,
    };
  }

  // Payment session resolve/reject errors carry no code, only a message.
  const notFound = outcome.userErrors.some((e) =>
    e.code !== null ? /NOT_FOUND$/.test(e.code) : /\bnot found\b/i.test(e.message),
  );
  return {
    ok: false,
    kind: notFound ? "not_found" : "user_error",
    message: notFound ? `Shopify does not know this ${noun}. Shopify said: ${shopifySays}` : `Shopify refused the ${noun} update: ${shopifySays}`,
    currentState: current,
    userErrors: outcome.userErrors,
  };
}

function describeRequest(requested: SessionStateCode): string {
  switch (requested) {
    case "RESOLVED":
      return "resolved";
    case "REJECTED":
      return "rejected";
    case "PENDING":
      return "marked pending";
    default:
      return requested.toLowerCase();
  }
}
