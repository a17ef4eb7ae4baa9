// Every GraphQL document the app sends to Shopify's Payments Apps API, one named
// operation each: the mutations, and the API's one query. A test validates all of them against the real 2026-04 schema, so a
// misspelt field fails in CI rather than in a merchant's checkout.

// The two `reason` fields are aliased because their types differ (nullable enum vs
// non-null enum), which GraphQL forbids under one response key.
// Payment session resolve/reject answer plain UserError (no code); pending has a code.
const PAYMENT_SESSION_FIELDS = `
      id
      pendingExpiresAt
      state {
        __typename
        ... on PaymentSessionState { code }
        ... on PaymentSessionStatePending { pendingReason: reason }
        ... on PaymentSessionStateRejected { rejectedReason: reason merchantMessage }
      }
      nextAction {
        action
        context {
          __typename
          ... on PaymentSessionActionsRedirect { redirectUrl }
        }
      }`;

export const PAYMENT_SESSION_RESOLVE = `mutation PaymentSessionResolve($id: ID!) {
  paymentSessionResolve(id: $id) {
    paymentSession {${PAYMENT_SESSION_FIELDS}
    }
    userErrors { field message }
  }
}`;

export const PAYMENT_SESSION_REJECT = `mutation PaymentSessionReject($id: ID!, $reason: PaymentSessionRejectionReasonInput!) {
  paymentSessionReject(id: $id, reason: $reason) {
    paymentSession {${PAYMENT_SESSION_FIELDS}
    }
    userErrors { field message }
  }
}`;

export const PAYMENT_SESSION_PENDING = `mutation PaymentSessionPending($id: ID!, $pendingExpiresAt: DateTime!, $reason: PaymentSessionStatePendingReason!) {
  paymentSessionPending(id: $id, pendingExpiresAt: $pendingExpiresAt, reason: $reason) {
    paymentSession {${PAYMENT_SESSION_FIELDS}
    }
    userErrors { field message code }
  }
}`;

export const REFUND_SESSION_RESOLVE = `mutation RefundSessionResolve($id: ID!) {
  refundSessionResolve(id: $id) {
    refundSession {
      id
      state {
        __typename
        ... on RefundSessionState { code }
        ... on RefundSessionStateRejected { reason merchantMessage }
      }
    }
    userErrors { field message code }
  }
}`;

export const REFUND_SESSION_REJECT = `mutation RefundSessionReject($id: ID!, $reason: RefundSessionRejectionReasonInput!) {
  refundSessionReject(id: $id, reason: $reason) {
    refundSession {
      id
      state {
        __typename
        ... on RefundSessionState { code }
        ... on RefundSessionStateRejected { reason merchantMessage }
      }
    }
    userErrors { field message code }
  }
}`;

export const CAPTURE_SESSION_RESOLVE = `mutation CaptureSessionResolve($id: ID!) {
  captureSessionResolve(id: $id) {
    captureSession {
      id
      state {
        __typename
        ... on CaptureSessionState { code }
        ... on CaptureSessionStateRejected { reason merchantMessage }
      }
    }
    userErrors { field message code }
  }
}`;

export const CAPTURE_SESSION_REJECT = `mutation CaptureSessionReject($id: ID!, $reason: CaptureSessionRejectionReasonInput!) {
  captureSessionReject(id: $id, reason: $reason) {
    captureSession {
      id
      state {
        __typename
        ... on CaptureSessionState { code }
        ... on CaptureSessionStateRejected { reason merchantMessage }
      }
    }
    userErrors { field message code }
  }
}`;

export const VOID_SESSION_RESOLVE = `mutation VoidSessionResolve($id: ID!) {
  voidSessionResolve(id: $id) {
    voidSession {
      id
      state {
        __typename
        ... on VoidSessionState { code }
        ... on VoidSessionStateRejected { reason merchantMessage }
      }
    }
    userErrors { field message code }
  }
}`;

export const VOID_SESSION_REJECT = `mutation VoidSessionReject($id: ID!, $reason: VoidSessionRejectionReasonInput!) {
  voidSessionReject(id: $id, reason: $reason) {
    voidSession {
      id
      state {
        __typename
        ... on VoidSessionState { code }
        ... on VoidSessionStateRejected { reason merchantMessage }
      }
    }
    userErrors { field message code }
  }
}`;

export const PAYMENTS_APP_CONFIGURE = `mutation PaymentsAppConfigure($externalHandle: String, $ready: Boolean!) {
  paymentsAppConfigure(externalHandle: $externalHandle, ready: $ready) {
    paymentsAppConfiguration { externalHandle ready }
    userErrors { field message }
  }
}`;

/**
 * The API's only query, which changes nothing: whether Shopify takes the shop's token. Shopify
 * revokes an app's tokens when the merchant uninstalls it, so a token it takes says the app is
 * installed (see confirmUninstall, app/shops/shopify-webhooks.server.ts).
 */
export const PUBLIC_API_VERSIONS = `query PublicApiVersions {
  publicApiVersions { handle supported }
}`;

/** Every document with its operation name, for schema validation in tests. */
export const PAYMENTS_APPS_DOCUMENTS = [
  { operationName: "PaymentSessionResolve", document: PAYMENT_SESSION_RESOLVE },
  { operationName: "PaymentSessionReject", document: PAYMENT_SESSION_REJECT },
  { operationName: "PaymentSessionPending", document: PAYMENT_SESSION_PENDING },
  { operationName: "RefundSessionResolve", document: REFUND_SESSION_RESOLVE },
  { operationName: "RefundSessionReject", document: REFUND_SESSION_REJECT },
  { operationName: "CaptureSessionResolve", document: CAPTURE_SESSION_RESOLVE },
  { operationName: "CaptureSessionReject", document: CAPTURE_SESSION_REJECT },
  { operationName: "VoidSessionResolve", document: VOID_SESSION_RESOLVE },
  { operationName: "VoidSessionReject", document: VOID_SESSION_REJECT },
  { operationName: "PaymentsAppConfigure", document: PAYMENTS_APP_CONFIGURE },
  { operationName: "PublicApiVersions", document: PUBLIC_API_VERSIONS },
] as const;

export type PaymentsAppsOperationName = (typeof PAYMENTS_APPS_DOCUMENTS)[number]["operationName"];
/** The operations that change something at Shopify, each answered with a MutationOutcome. */
export type PaymentsAppsMutationName = Exclude<PaymentsAppsOperationName, "PublicApiVersions">;
