// The public face of the Payments Apps client: what the payments domain and shops use.
export {
  createPaymentsAppsClient,
  DEFAULT_PAYMENTS_APPS_API_VERSION,
  type PaymentsAppsClient,
  type PaymentsAppsClientOptions,
  type PaymentsAppsLogger,
  type PaymentsAppsResult,
  type PublicApiVersionsResult,
} from "./client";
export { classifyUserErrors, type UserErrorClassification } from "./classify-user-errors";
export { PAYMENTS_APPS_DOCUMENTS, type PaymentsAppsMutationName, type PaymentsAppsOperationName } from "./documents";
export { describePaymentsAppsError, type GraphqlErrorSummary, type PaymentsAppsError, type PaymentsAppsErrorKind } from "./errors";
export {
  PAYMENT_SESSION_REJECTION_CODES,
  PENDING_REASONS,
  type CaptureRejectionCode,
  type MutationOutcome,
  type PaymentSessionRejectionCode,
  type PaymentsAppsUserError,
  type PendingReason,
  type PublicApiVersion,
  type RefundRejectionCode,
  type SessionState,
  type SessionStateCode,
  type VoidRejectionCode,
} from "./outcome";
