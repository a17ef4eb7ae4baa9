// What a Payments Apps mutation answered, and the zod schemas that turn Shopify's raw
// `data` into it. Nothing from the response is used before it passes these schemas.

import { z } from "zod";
import type { PaymentsAppsMutationName } from "./documents";

export const PAYMENT_SESSION_REJECTION_CODES = [
  "AMOUNT_TOO_LARGE",
  "AMOUNT_TOO_SMALL",
  "AUTHENTICATION_FAILED",
  "AUTHENTICATION_REQUIRED",
  "CALL_ISSUER",
  "CANCELLED_PAYMENT",
  "CARD_DECLINED",
  "CARD_TESTING",
  "CONFIRMATION_REJECTED",
  "DO_NOT_HONOR",
  "EXPIRED_CARD",
  "FRAUD_SUSPECTED",
  "HIGH_RISK_FRAUD_SUSPECTED",
  "INCORRECT_ADDRESS",
  "INCORRECT_CVC",
  "INCORRECT_NUMBER",
  "INCORRECT_PIN",
  "INCORRECT_ZIP",
  "INSTRUMENT_DECLINED",
  "INSUFFICIENT_FUNDS",
  "INVALID_AMOUNT",
  "INVALID_CURRENCY",
  "INVALID_CVC",
  "INVALID_EXPIRY_DATE",
  "INVALID_NUMBER",
  "INVALID_PAYMENT_METHOD",
  "INVALID_PURCHASE_TYPE",
  "INVALID_REQUEST",
  "MERCHANT_ACCOUNT_ERROR",
  "MERCHANT_RULE",
  "PAYMENT_METHOD_UNSUPPORTED",
  "PICK_UP_CARD",
  "PROCESSING_ERROR",
  "RETRY_DECLINED",
  "RISKY",
  "TRANSACTION_LIMIT_EXCEEDED",
] as const;
export type PaymentSessionRejectionCode = (typeof PAYMENT_SESSION_REJECTION_CODES)[number];

export const PENDING_REASONS = [
  "BUYER_ACTION_REQUIRED",
  "MERCHANT_ACTION_REQUIRED",
  "PARTNER_ACTION_REQUIRED",
  "NETWORK_ACTION_REQUIRED",
] as const;
export type PendingReason = (typeof PENDING_REASONS)[number];

export type RefundRejectionCode = "PROCESSING_ERROR";
export type VoidRejectionCode = "PROCESSING_ERROR";
export type CaptureRejectionCode = "PROCESSING_ERROR" | "AUTHORIZATION_EXPIRED";

const SESSION_STATE_CODES = ["RESOLVED", "REJECTED", "PENDING", "REDIRECTING", "CONFIRMING", "BUYER_ACTION_REQUIRED"] as const;
export type SessionStateCode = (typeof SESSION_STATE_CODES)[number];

export type SessionState =
  | { code: "RESOLVED" }
  | { code: "REJECTED"; reason: string; merchantMessage: string | null }
  | { code: "PENDING"; reason: PendingReason | null }
  | { code: "REDIRECTING" | "CONFIRMING" | "BUYER_ACTION_REQUIRED" };

export interface PaymentsAppsUserError {
  field: string[] | null;
  message: string;
  /** Absent on payment session resolve/reject, whose schema has no code. */
  code: string | null;
}

export interface MutationOutcome {
  operation: PaymentsAppsMutationName;
  /** The session's gid as Shopify returned it; null when Shopify returned no session. */
  sessionId: string | null;
  state: SessionState | null;
  /** Where to send the buyer next (payment sessions only). */
  redirectUrl: string | null;
  pendingExpiresAt: string | null;
  /** Only for PaymentsAppConfigure. */
  configuration: { externalHandle: string | null; ready: boolean } | null;
  userErrors: PaymentsAppsUserError[];
}

const userErrorSchema = z.object({
  field: z.array(z.string()).nullish(),
  message: z.string(),
  code: z.string().nullish(),
});

const stateSchema = z.object({
  __typename: z.string(),
  code: z.enum(SESSION_STATE_CODES),
  pendingReason: z.enum(PENDING_REASONS).nullish(),
  rejectedReason: z.string().nullish(),
  reason: z.string().nullish(),
  merchantMessage: z.string().nullish(),
});

const webAddress = z
  .string()
  .url()
  .refine((url) => /^https?:\/\//i.test(url), "must be http(s)");

const paymentSessionSchema = z.object({
  id: z.string(),
  pendingExpiresAt: z.string().nullish(),
  state: stateSchema,
  nextAction: z
    .object({
      action: z.string(),
      // The shopper is redirected there: a web address only. Anything else (a javascript: or
      // data: URL) is taken as no redirect, not as an answer to retry.
      context: z.object({ __typename: z.string(), redirectUrl: webAddress.optional().catch(undefined) }),
    })
    .nullish(),
});

const otherSessionSchema = z.object({ id: z.string(), state: stateSchema });

const userErrorsPayloadSchema = z.object({ userErrors: z.array(userErrorSchema) }).passthrough();

const configurePayloadSchema = z.object({
  paymentsAppConfiguration: z.object({ externalHandle: z.string().nullish(), ready: z.boolean() }).nullish(),
  userErrors: z.array(userErrorSchema),
});

interface OperationShape {
  rootField: string;
  sessionKey: "paymentSession" | "refundSession" | "captureSession" | "voidSession" | null;
}

export const OPERATION_SHAPES: Record<PaymentsAppsMutationName, OperationShape> = {
  PaymentSessionResolve: { rootField: "paymentSessionResolve", sessionKey: "paymentSession" },
  PaymentSessionReject: { rootField: "paymentSessionReject", sessionKey: "paymentSession" },
  PaymentSessionPending: { rootField: "paymentSessionPending", sessionKey: "paymentSession" },
  RefundSessionResolve: { rootField: "refundSessionResolve", sessionKey: "refundSession" },
  RefundSessionReject: { rootField: "refundSessionReject", sessionKey: "refundSession" },
  CaptureSessionResolve: { rootField: "captureSessionResolve", sessionKey: "captureSession" },
  CaptureSessionReject: { rootField: "captureSessionReject", sessionKey: "captureSession" },
  VoidSessionResolve: { rootField: "voidSessionResolve", sessionKey: "voidSession" },
  VoidSessionReject: { rootField: "voidSessionReject", sessionKey: "voidSession" },
  PaymentsAppConfigure: { rootField: "paymentsAppConfigure", sessionKey: null },
};

function toState(raw: z.infer<typeof stateSchema>): SessionState {
  switch (raw.code) {
    case "RESOLVED":
      return { code: "RESOLVED" };
    case "REJECTED":
      return {
        code: "REJECTED",
        reason: raw.rejectedReason ?? raw.reason ?? "UNKNOWN",
        merchantMessage: raw.merchantMessage ?? null,
      };
    case "PENDING":
      return { code: "PENDING", reason: raw.pendingReason ?? null };
    default:
      return { code: raw.code };
  }
}

function toUserErrors(raw: z.infer<typeof userErrorSchema>[]): PaymentsAppsUserError[] {
  return raw.map((e) => ({ field: e.field ?? null, message: e.message, code: e.code ?? null }));
}

/**
 * Parses `data` of a successful response into an outcome; a string describing the
 * problem when the data does not have the shape the document asked for.
 */
export function parseMutationData(
  operation: PaymentsAppsMutationName,
  data: unknown,
): { ok: true; outcome: MutationOutcome } | { ok: false; problem: string } {
  const shape = OPERATION_SHAPES[operation];
  const root = z.object({ [shape.rootField]: z.unknown() }).safeParse(data);
  if (!root.success) return { ok: false, problem: `data.${shape.rootField} is missing` };
  const payload: unknown = (root.data as Record<string, unknown>)[shape.rootField];
  if (payload === null || payload === undefined) {
    return { ok: false, problem: `data.${shape.rootField} is null without errors` };
  }

  if (shape.sessionKey === null) {
    const parsed = configurePayloadSchema.safeParse(payload);
    if (!parsed.success) return { ok: false, problem: describeIssues(parsed.error) };
    const configuration = parsed.data.paymentsAppConfiguration;
    return {
      ok: true,
      outcome: {
        operation,
        sessionId: null,
        state: null,
        redirectUrl: null,
        pendingExpiresAt: null,
        configuration: configuration
          ? { externalHandle: configuration.externalHandle ?? null, ready: configuration.ready }
          : null,
        userErrors: toUserErrors(parsed.data.userErrors),
      },
    };
  }

  const errors = userErrorsPayloadSchema.safeParse(payload);
  if (!errors.success) return { ok: false, problem: describeIssues(errors.error) };
  const rawSession: unknown = (errors.data as Record<string, unknown>)[shape.sessionKey];

  if (shape.sessionKey === "paymentSession") {
    const parsed = paymentSessionSchema.nullish().safeParse(rawSession);
    if (!parsed.success) return { ok: false, problem: describeIssues(parsed.error, shape.sessionKey) };
    const session = parsed.data;
    return {
      ok: true,
      outcome: {
        operation,
        sessionId: session?.id ?? null,
        state: session ? toState(session.state) : null,
        redirectUrl: session?.nextAction?.context.redirectUrl ?? null,
        pendingExpiresAt: session?.pendingExpiresAt ?? null,
        configuration: null,
        userErrors: toUserErrors(errors.data.userErrors),
      },
    };
  }

  const parsed = otherSessionSchema.nullish().safeParse(rawSession);
  if (!parsed.success) return { ok: false, problem: describeIssues(parsed.error, shape.sessionKey) };
  const session = parsed.data;
  return {
    ok: true,
    outcome: {
      operation,
      sessionId: session?.id ?? null,
      state: session ? toState(session.state) : null,
      redirectUrl: null,
      pendingExpiresAt: null,
      configuration: null,
      userErrors: toUserErrors(errors.data.userErrors),
    },
  };
}

function describeIssues(error: z.ZodError, prefix?: string): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${[prefix, ...i.path].filter((p) => p !== undefined).join(".") || "(root)"}: ${i.message}`)
    .join("; ");
}

/** A version of the Admin API, as the PublicApiVersions query lists them. */
export interface PublicApiVersion {
  handle: string;
  supported: boolean;
}

const publicApiVersionsSchema = z.object({ publicApiVersions: z.array(z.object({ handle: z.string(), supported: z.boolean() })) });

/** Parses `data` of the PublicApiVersions query; a string describing the problem when it has another shape. */
export function parsePublicApiVersions(data: unknown): { ok: true; outcome: PublicApiVersion[] } | { ok: false; problem: string } {
  const parsed = publicApiVersionsSchema.safeParse(data);
  if (!parsed.success) return { ok: false, problem: describeIssues(parsed.error) };
  return { ok: true, outcome: parsed.data.publicApiVersions.map((v) => ({ handle: v.handle, supported: v.supported })) };
}
