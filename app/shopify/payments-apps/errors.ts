// The ways a call to Shopify's Payments Apps API can fail, as one discriminated union.
// `retryable` tells the caller (the outbox) whether trying again later can help; an
// indeterminate call (timeout, network) is retryable because every mutation of this API
// is idempotent: repeating the same resolve/reject answers the same.

import type { PaymentsAppsOperationName } from "./documents";

interface ErrorBase {
  operation: PaymentsAppsOperationName;
  /** Safe to show or log: never contains the access token. */
  message: string;
}

export type PaymentsAppsError =
  | (ErrorBase & { kind: "throttled"; retryable: true; status: number; retryAfterMs: number | null })
  | (ErrorBase & { kind: "server_error"; retryable: true; status: number })
  | (ErrorBase & { kind: "network"; retryable: true })
  | (ErrorBase & { kind: "timeout"; retryable: true; timeoutMs: number })
  | (ErrorBase & { kind: "unauthorized"; retryable: false; status: 401 | 403 })
  // Any other non-2xx answer (404 wrong shop or version, 402/423 frozen or locked shop...).
  | (ErrorBase & { kind: "http_error"; retryable: false; status: number })
  | (ErrorBase & { kind: "graphql_error"; retryable: false; status: number; errors: GraphqlErrorSummary[] })
  | (ErrorBase & { kind: "invalid_response"; retryable: false; status: number });

export type PaymentsAppsErrorKind = PaymentsAppsError["kind"];

export interface GraphqlErrorSummary {
  message: string;
  code: string | null;
}

/** A one-line description for logs and merchant-facing diagnostics. */
export function describePaymentsAppsError(error: PaymentsAppsError): string {
  const status = "status" in error ? ` (HTTP ${error.status})` : "";
  return `${error.operation}: ${error.kind}${status}: ${error.message}`;
}
