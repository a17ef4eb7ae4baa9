// The root value that graphql-js executes the app's operations against: each mutation
// applies the store's rules and returns objects shaped like the schema's payload types
// (with __typename for the unions), so the answer follows the app's selection set.

import { GraphQLError } from "graphql";
import type {
  FollowUpSessionRecord,
  FollowUpType,
  PaymentSessionRecord,
  PendingReason,
  StandinStore,
  StandinUserError,
  TransitionResult,
} from "./store";
import { STANDIN_API_VERSION } from "./schema";

interface IdArgs {
  id: string;
}
interface ReasonArgs extends IdArgs {
  reason: { code: string; merchantMessage?: string | null };
}

export function createRootValue(store: StandinStore, orderPageUrl: (paymentId: string) => string): Record<string, unknown> {
  const paymentPayload = ({ session, userErrors }: TransitionResult<PaymentSessionRecord>) => ({
    paymentSession: session ? paymentSessionObject(session, orderPageUrl(session.id)) : null,
    userErrors: userErrors.map(userErrorObject),
  });
  const followUpPayload = (type: FollowUpType, { session, userErrors }: TransitionResult<FollowUpSessionRecord>) => ({
    [`${type}Session`]: session ? followUpSessionObject(session) : null,
    userErrors: userErrors.map(userErrorObject),
  });

  const unsupported = (field: string) => () => {
    throw new GraphQLError(`${field} is not available in the Shopify stand-in (offsite payments only).`);
  };

  return {
    publicApiVersions: () => [{ handle: STANDIN_API_VERSION, displayName: STANDIN_API_VERSION, supported: true }],

    paymentSessionResolve: ({ id }: IdArgs) => paymentPayload(store.resolvePayment(id)),
    paymentSessionReject: ({ id, reason }: ReasonArgs) => paymentPayload(store.rejectPayment(id, reason)),
    paymentSessionPending: ({ id, pendingExpiresAt, reason }: IdArgs & { pendingExpiresAt: string; reason: PendingReason }) =>
      paymentPayload(store.pendPayment(id, pendingExpiresAt, reason)),

    refundSessionResolve: ({ id }: IdArgs) => followUpPayload("refund", store.resolveFollowUp("refund", id)),
    refundSessionReject: ({ id, reason }: ReasonArgs) => followUpPayload("refund", store.rejectFollowUp("refund", id, reason)),
    captureSessionResolve: ({ id }: IdArgs) => followUpPayload("capture", store.resolveFollowUp("capture", id)),
    captureSessionReject: ({ id, reason }: ReasonArgs) => followUpPayload("capture", store.rejectFollowUp("capture", id, reason)),
    voidSessionResolve: ({ id }: IdArgs) => followUpPayload("void", store.resolveFollowUp("void", id)),
    voidSessionReject: ({ id, reason }: ReasonArgs) => followUpPayload("void", store.rejectFollowUp("void", id, reason)),

    paymentsAppConfigure: ({ externalHandle, ready }: { externalHandle?: string | null; ready: boolean }) => ({
      paymentsAppConfiguration: store.configure(externalHandle ?? null, ready),
      userErrors: [],
    }),

    paymentSessionConfirm: unsupported("paymentSessionConfirm"),
    paymentSessionModal: unsupported("paymentSessionModal"),
    paymentSessionRedirect: unsupported("paymentSessionRedirect"),
    verificationSessionRedirect: unsupported("verificationSessionRedirect"),
    verificationSessionReject: unsupported("verificationSessionReject"),
    verificationSessionResolve: unsupported("verificationSessionResolve"),
  };
}

function userErrorObject(error: StandinUserError) {
  return { field: error.field, message: error.message, code: error.code ?? null };
}

function paymentSessionObject(session: PaymentSessionRecord, redirectUrl: string) {
  const state = session.state;
  return {
    id: session.gid,
    authorizationExpiresAt: null,
    pendingExpiresAt: state.code === "PENDING" ? state.pendingExpiresAt : null,
    state: (() => {
      switch (state.code) {
        case "OPEN":
          return { __typename: "PaymentSessionStateRedirecting", code: "REDIRECTING" };
        case "PENDING":
          return { __typename: "PaymentSessionStatePending", code: "PENDING", reason: state.reason };
        case "RESOLVED":
          return { __typename: "PaymentSessionStateResolved", code: "RESOLVED" };
        case "REJECTED":
          return {
            __typename: "PaymentSessionStateRejected",
            code: "REJECTED",
            reason: state.reason,
            merchantMessage: state.merchantMessage,
            source: null,
          };
      }
    })(),
    nextAction: {
      action: "REDIRECT",
      context: { __typename: "PaymentSessionActionsRedirect", redirectUrl },
    },
  };
}

const FOLLOW_UP_TYPENAME: Record<FollowUpType, string> = { refund: "RefundSession", capture: "CaptureSession", void: "VoidSession" };

function followUpSessionObject(session: FollowUpSessionRecord) {
  const prefix = FOLLOW_UP_TYPENAME[session.type];
  const state = session.state;
  return {
    id: session.gid,
    state:
      state.code === "REJECTED"
        ? { __typename: `${prefix}StateRejected`, code: "REJECTED", reason: state.reason, merchantMessage: state.merchantMessage }
        : // An open session is never returned by a mutation: every mutation that returns it has just closed it.
          { __typename: `${prefix}StateResolved`, code: "RESOLVED" },
  };
}
