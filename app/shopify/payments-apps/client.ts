// The app's client for Shopify's Payments Apps GraphQL API: one HTTP attempt per call,
// every answer parsed with zod, every failure classified into PaymentsAppsError. It does
// not retry by itself: the durable outbox owns retries (and their backoff), using each
// error's `retryable` flag. The access token is sent only in its header and is scrubbed
// from anything that could reach a log or an error message.

import { err, ok, type Result } from "neverthrow";
import { z } from "zod";
import {
  CAPTURE_SESSION_REJECT,
  CAPTURE_SESSION_RESOLVE,
  PAYMENT_SESSION_PENDING,
  PAYMENT_SESSION_REJECT,
  PAYMENT_SESSION_RESOLVE,
  PAYMENTS_APP_CONFIGURE,
  PUBLIC_API_VERSIONS,
  REFUND_SESSION_REJECT,
  REFUND_SESSION_RESOLVE,
  VOID_SESSION_REJECT,
  VOID_SESSION_RESOLVE,
  type PaymentsAppsMutationName,
  type PaymentsAppsOperationName,
} from "./documents";
import { describePaymentsAppsError, type GraphqlErrorSummary, type PaymentsAppsError } from "./errors";
import {
  parseMutationData,
  parsePublicApiVersions,
  type CaptureRejectionCode,
  type MutationOutcome,
  type PaymentSessionRejectionCode,
  type PendingReason,
  type PublicApiVersion,
  type RefundRejectionCode,
  type VoidRejectionCode,
} from "./outcome";

export const DEFAULT_PAYMENTS_APPS_API_VERSION = "2026-04";
const DEFAULT_TIMEOUT_MS = 15_000;

export interface PaymentsAppsLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface PaymentsAppsClientOptions {
  /** The shop's myshopify domain, e.g. "demo-shop.myshopify.com". */
  shopDomain: string;
  /** The shop's offline access token. */
  accessToken: string;
  apiVersion?: string;
  /** Full URL override (the local Shopify stand-in); default https://{shop}/payments_apps/api/{version}/graphql.json. */
  endpoint?: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  logger?: PaymentsAppsLogger;
}

export type PaymentsAppsResult = Result<MutationOutcome, PaymentsAppsError>;
export type PublicApiVersionsResult = Result<PublicApiVersion[], PaymentsAppsError>;

export interface PaymentsAppsClient {
  readonly endpoint: string;
  resolvePaymentSession(gid: string): Promise<PaymentsAppsResult>;
  rejectPaymentSession(gid: string, reason: { code: PaymentSessionRejectionCode; merchantMessage?: string }): Promise<PaymentsAppsResult>;
  pendPaymentSession(gid: string, pending: { pendingExpiresAt: Date; reason: PendingReason }): Promise<PaymentsAppsResult>;
  resolveRefundSession(gid: string): Promise<PaymentsAppsResult>;
  rejectRefundSession(gid: string, reason: { code: RefundRejectionCode; merchantMessage?: string }): Promise<PaymentsAppsResult>;
  resolveCaptureSession(gid: string): Promise<PaymentsAppsResult>;
  rejectCaptureSession(gid: string, reason: { code: CaptureRejectionCode; merchantMessage?: string }): Promise<PaymentsAppsResult>;
  resolveVoidSession(gid: string): Promise<PaymentsAppsResult>;
  rejectVoidSession(gid: string, reason: { code: VoidRejectionCode; merchantMessage?: string }): Promise<PaymentsAppsResult>;
  configurePaymentsApp(configuration: { externalHandle?: string | null; ready: boolean }): Promise<PaymentsAppsResult>;
  /**
   * The API's one query (it changes nothing): answered when Shopify takes the shop's token, an
   * `unauthorized` 401 when it refuses it (revoked at an uninstall, or expired).
   */
  publicApiVersions(): Promise<PublicApiVersionsResult>;
}

type Parsed<T> = { ok: true; outcome: T } | { ok: false; problem: string };

const SHOP_DOMAIN = /^[a-z0-9][a-z0-9-]*(\.[a-z0-9][a-z0-9-]*)+$/i;

const graphqlErrorSchema = z
  .object({
    message: z.string(),
    extensions: z.object({ code: z.string().optional() }).passthrough().nullish(),
  })
  .passthrough();

const envelopeSchema = z.object({
  data: z.unknown().optional(),
  errors: z.array(graphqlErrorSchema).optional(),
  extensions: z
    .object({
      cost: z
        .object({
          requestedQueryCost: z.number().optional(),
          throttleStatus: z
            .object({ currentlyAvailable: z.number(), restoreRate: z.number().positive() })
            .partial()
            .optional(),
        })
        .optional(),
    })
    .passthrough()
    .optional(),
});

export function createPaymentsAppsClient(options: PaymentsAppsClientOptions): PaymentsAppsClient {
  const apiVersion = options.apiVersion ?? DEFAULT_PAYMENTS_APPS_API_VERSION;
  if (!options.endpoint && !SHOP_DOMAIN.test(options.shopDomain)) {
    throw new TypeError("createPaymentsAppsClient: shopDomain must be a bare host name such as demo-shop.myshopify.com");
  }
  if (!options.accessToken) throw new TypeError("createPaymentsAppsClient: accessToken is required");
  const endpoint = options.endpoint ?? `https://${options.shopDomain}/payments_apps/api/${apiVersion}/graphql.json`;
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const { accessToken, logger } = options;

  const scrub = (text: string): string => text.split(accessToken).join("[redacted]");

  function send(operation: PaymentsAppsMutationName, document: string, variables: Record<string, unknown>): Promise<PaymentsAppsResult> {
    return logged(operation, document, variables, (data) => parseMutationData(operation, data), (outcome) => ({
      state: outcome.state?.code ?? null,
      userErrors: outcome.userErrors.length,
    }));
  }

  async function logged<T>(
    operation: PaymentsAppsOperationName,
    document: string,
    variables: Record<string, unknown>,
    parse: (data: unknown) => Parsed<T>,
    describe: (outcome: T) => Record<string, unknown>,
  ): Promise<Result<T, PaymentsAppsError>> {
    const result = await attempt(operation, document, variables, parse);
    if (result.isErr()) {
      logger?.warn("Payments Apps call failed", {
        shop: options.shopDomain,
        operation,
        kind: result.error.kind,
        retryable: result.error.retryable,
        detail: describePaymentsAppsError(result.error),
      });
    } else {
      logger?.info("Payments Apps call answered", { shop: options.shopDomain, operation, ...describe(result.value) });
    }
    return result;
  }

  async function attempt<T>(
    operation: PaymentsAppsOperationName,
    document: string,
    variables: Record<string, unknown>,
    parse: (data: unknown) => Parsed<T>,
  ): Promise<Result<T, PaymentsAppsError>> {
    let status = 0;
    let bodyText: string;
    let retryAfterHeader: string | null = null;
    try {
      const response = await fetchImpl(endpoint, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json",
          "X-Shopify-Access-Token": accessToken,
        },
        body: JSON.stringify({ query: document, variables, operationName: operation }),
        // Never followed: fetch would carry the access token (only standard credentials are
        // stripped) and, on a 307 or 308, the mutation to wherever the answer points.
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = response.status;
      retryAfterHeader = response.headers.get("retry-after");
      bodyText = await response.text();
    } catch (cause) {
      if (isTimeout(cause)) {
        return err({
          kind: "timeout",
          retryable: true,
          operation,
          timeoutMs,
          message: `No complete answer within ${timeoutMs} ms${status ? ` (HTTP ${status} started)` : ""}; the outcome is unknown`,
        });
      }
      return err({ kind: "network", retryable: true, operation, message: scrub(`Network failure: ${describeCause(cause)}`) });
    }

    if (status === 401 || status === 403) {
      return err({
        kind: "unauthorized",
        retryable: false,
        operation,
        status,
        message:
          status === 401
            ? "Shopify refused the shop's access token (the app may have been uninstalled)"
            : "Shopify forbade the call (HTTP 403): the app's access lacks a permission it needs, such as the payment sessions scope",
      });
    }
    if (status === 429) {
      return err({
        kind: "throttled",
        retryable: true,
        operation,
        status,
        retryAfterMs: parseRetryAfter(retryAfterHeader),
        message: "Shopify throttled the request (HTTP 429)",
      });
    }
    if (status >= 500) {
      return err({ kind: "server_error", retryable: true, operation, status, message: `Shopify answered HTTP ${status}` });
    }
    if (status < 200 || status >= 300) {
      return err({ kind: "http_error", retryable: false, operation, status, message: `Shopify answered HTTP ${status}` });
    }

    let json: unknown;
    try {
      json = JSON.parse(bodyText);
    } catch {
      return err({ kind: "invalid_response", retryable: false, operation, status, message: "The answer is not JSON" });
    }
    const envelope = envelopeSchema.safeParse(json);
    if (!envelope.success) {
      return err({ kind: "invalid_response", retryable: false, operation, status, message: "The answer is not a GraphQL response" });
    }

    const errors = envelope.data.errors ?? [];
    if (errors.length > 0) {
      const summaries: GraphqlErrorSummary[] = errors.map((e) => ({
        message: scrub(e.message),
        code: e.extensions?.code ?? null,
      }));
      if (summaries.some((e) => e.code === "THROTTLED")) {
        const cost = envelope.data.extensions?.cost;
        return err({
          kind: "throttled",
          retryable: true,
          operation,
          status,
          retryAfterMs: waitForCost(cost?.requestedQueryCost, cost?.throttleStatus),
          message: "Shopify throttled the request (cost limit)",
        });
      }
      if (summaries.some((e) => e.code === "INTERNAL_SERVER_ERROR")) {
        return err({ kind: "server_error", retryable: true, operation, status, message: summaries.map((e) => e.message).join("; ") });
      }
      return err({
        kind: "graphql_error",
        retryable: false,
        operation,
        status,
        errors: summaries,
        message: summaries.map((e) => (e.code ? `${e.message} [${e.code}]` : e.message)).join("; "),
      });
    }

    const parsed = parse(envelope.data.data);
    if (!parsed.ok) {
      return err({ kind: "invalid_response", retryable: false, operation, status, message: `Unexpected answer: ${parsed.problem}` });
    }
    return ok(parsed.outcome);
  }

  const reasonVariables = (code: string, merchantMessage: string | undefined) => ({
    code,
    ...(merchantMessage !== undefined ? { merchantMessage } : {}),
  });

  return {
    endpoint,
    resolvePaymentSession: (gid) => send("PaymentSessionResolve", PAYMENT_SESSION_RESOLVE, { id: gid }),
    rejectPaymentSession: (gid, { code, merchantMessage }) =>
      send("PaymentSessionReject", PAYMENT_SESSION_REJECT, { id: gid, reason: reasonVariables(code, merchantMessage) }),
    pendPaymentSession: (gid, { pendingExpiresAt, reason }) => {
      if (Number.isNaN(pendingExpiresAt.getTime())) throw new TypeError("pendPaymentSession: pendingExpiresAt is an invalid Date");
      return send("PaymentSessionPending", PAYMENT_SESSION_PENDING, {
        id: gid,
        pendingExpiresAt: pendingExpiresAt.toISOString(),
        reason,
      });
    },
    resolveRefundSession: (gid) => send("RefundSessionResolve", REFUND_SESSION_RESOLVE, { id: gid }),
    rejectRefundSession: (gid, { code, merchantMessage }) =>
      send("RefundSessionReject", REFUND_SESSION_REJECT, { id: gid, reason: reasonVariables(code, merchantMessage) }),
    resolveCaptureSession: (gid) => send("CaptureSessionResolve", CAPTURE_SESSION_RESOLVE, { id: gid }),
    rejectCaptureSession: (gid, { code, merchantMessage }) =>
      send("CaptureSessionReject", CAPTURE_SESSION_REJECT, { id: gid, reason: reasonVariables(code, merchantMessage) }),
    resolveVoidSession: (gid) => send("VoidSessionResolve", VOID_SESSION_RESOLVE, { id: gid }),
    rejectVoidSession: (gid, { code, merchantMessage }) =>
      send("VoidSessionReject", VOID_SESSION_REJECT, { id: gid, reason: reasonVariables(code, merchantMessage) }),
    configurePaymentsApp: ({ externalHandle, ready }) =>
      send("PaymentsAppConfigure", PAYMENTS_APP_CONFIGURE, { externalHandle: externalHandle ?? null, ready }),
    publicApiVersions: () => logged("PublicApiVersions", PUBLIC_API_VERSIONS, {}, parsePublicApiVersions, (versions) => ({ versions: versions.length })),
  };
}

function isTimeout(cause: unknown): boolean {
  return cause instanceof Error && (cause.name === "TimeoutError" || cause.name === "AbortError");
}

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return "unknown error";
  const inner = (cause as Error & { cause?: unknown }).cause;
  if (inner instanceof Error) {
    const code = (inner as Error & { code?: unknown }).code;
    return typeof code === "string" ? `${cause.message} (${code})` : `${cause.message} (${inner.message})`;
  }
  return cause.message;
}

function parseRetryAfter(header: string | null): number | null {
  if (header === null) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

// Shopify's leaky bucket: the wait is the missing points divided by the restore rate.
function waitForCost(
  requested: number | undefined,
  throttle: { currentlyAvailable?: number | undefined; restoreRate?: number | undefined } | undefined,
): number | null {
  if (requested === undefined || throttle?.currentlyAvailable === undefined || throttle.restoreRate === undefined) return null;
  const missing = Math.max(0, requested - throttle.currentlyAvailable);
  return Math.ceil((missing / throttle.restoreRate) * 1000);
}
