// Owns the typed failures of the gateway client. Each is a small class with a
// `kind` to switch on, a `retryable` flag saying whether trying the same call
// later can succeed, and the underlying `cause`. Messages never carry secrets.
import type { QuotaWindow } from "./quota";

export type GatewayOperation = "currencies" | "create_device" | "list_orders" | "create_order" | "order_info";

abstract class GatewayErrorBase extends Error {
  abstract readonly kind: string;
  abstract readonly retryable: boolean;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * 403: the device key is missing, invalid or its device is disabled. A 401 (the gateway's
 * authentication, or something in front of it, asking for credentials) is the same refusal.
 */
export class GatewayUnauthorizedError extends GatewayErrorBase {
  readonly kind = "unauthorized";
  readonly retryable = false;
  override readonly name = "GatewayUnauthorizedError";
  constructor(
    readonly status: 401 | 403 = 403,
    options?: { cause?: unknown },
  ) {
    super(`the gateway refused the device key (${status}): check the key and that the device is enabled`, options);
  }
}

/**
 * The service refused the request itself: on POST /orders/ a 404 means an
 * invalid currency, an amount below the minimum, bad redirect URLs or missing
 * identity documents; `detail` is the service's own explanation. Any other
 * 4xx the specification does not list lands here too.
 */
export class GatewayRejectedError extends GatewayErrorBase {
  readonly kind = "rejected";
  readonly retryable = false;
  override readonly name = "GatewayRejectedError";
  constructor(
    readonly status: number,
    readonly detail: string | null,
    options?: { cause?: unknown },
  ) {
    super(`the gateway rejected the request (${status})${detail === null ? "" : `: ${detail}`}`, options);
  }
}

/** 404 on a read: no such order for this device or merchant. */
export class GatewayNotFoundError extends GatewayErrorBase {
  readonly kind = "not_found";
  readonly retryable = false;
  override readonly name = "GatewayNotFoundError";
  constructor(
    readonly detail: string | null,
    options?: { cause?: unknown },
  ) {
    super(`the gateway has no such resource (404)${detail === null ? "" : `: ${detail}`}`, options);
  }
}

/** 429 from the service; it asked to wait `retryAfterSeconds` (null when it did not say). */
export class GatewayThrottledError extends GatewayErrorBase {
  readonly kind = "throttled";
  readonly retryable = true;
  override readonly name = "GatewayThrottledError";
  constructor(
    readonly retryAfterSeconds: number | null,
    options?: { cause?: unknown },
  ) {
    super(`the gateway throttled the request (429)${retryAfterSeconds === null ? "" : `, retry after ${retryAfterSeconds}s`}`, options);
  }
}

/** 5xx from the service (or whatever stands in front of it), or a redirect (3xx), which is no answer either. */
export class GatewayServerError extends GatewayErrorBase {
  readonly kind = "server_error";
  readonly retryable = true;
  override readonly name = "GatewayServerError";
  constructor(
    readonly status: number,
    options?: { cause?: unknown },
  ) {
    super(`the gateway failed (${status})`, options);
  }
}

/**
 * The connection failed. `beforeSend` is true only when the request certainly
 * never reached the service (connection refused, name not resolved).
 */
export class GatewayNetworkError extends GatewayErrorBase {
  readonly kind = "network";
  readonly retryable = true;
  override readonly name = "GatewayNetworkError";
  constructor(
    readonly code: string | null,
    readonly beforeSend: boolean,
    options?: { cause?: unknown },
  ) {
    super(`could not reach the gateway${code === null ? "" : ` (${code})`}`, options);
  }
}

/** No complete answer within the client's time limit. */
export class GatewayTimeoutError extends GatewayErrorBase {
  readonly kind = "timeout";
  readonly retryable = true;
  override readonly name = "GatewayTimeoutError";
  constructor(
    readonly timeoutMs: number,
    options?: { cause?: unknown },
  ) {
    super(`the gateway did not answer within ${timeoutMs} ms`, options);
  }
}

/** The answer does not match the expected shape; `path` points at the offending field. */
export class GatewayInvalidResponseError extends GatewayErrorBase {
  readonly kind = "invalid_response";
  readonly retryable = false;
  override readonly name = "GatewayInvalidResponseError";
  constructor(
    readonly path: readonly (string | number)[],
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`the gateway answered an unexpected body at ${path.length === 0 ? "(root)" : path.join(".")}: ${reason}`, options);
  }
}

/**
 * The caller's own input broke a bound of the specification; nothing was sent.
 * `path` names the offending field.
 */
export class GatewayInvalidRequestError extends GatewayErrorBase {
  readonly kind = "invalid_request";
  readonly retryable = false;
  override readonly name = "GatewayInvalidRequestError";
  constructor(
    readonly path: readonly (string | number)[],
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid request at ${path.length === 0 ? "(root)" : path.join(".")}: ${reason}`, options);
  }
}

/**
 * A creating call (POST /orders/, POST /device/) may or may not have taken
 * effect: it timed out after sending, the service failed with 5xx, the
 * connection broke after sending, or a 200 answer could not be read. It was
 * NOT resent, because the service does not deduplicate. Look the order up (by
 * `reference` in GET /orders/) before creating another one.
 */
export class GatewayOutcomeUnknownError extends GatewayErrorBase {
  readonly kind = "outcome_unknown";
  readonly retryable = false;
  override readonly name = "GatewayOutcomeUnknownError";
  constructor(
    readonly operation: "create_order" | "create_device",
    readonly reference: string | null,
    options: { cause: GatewayError },
  ) {
    super(`the outcome of ${operation} is unknown (${options.cause.kind}); look it up before trying again`, options);
  }
}

/** The client's own quota would be exceeded; nothing was sent. Try again at `retryAt`. */
export class GatewayQuotaExhaustedError extends GatewayErrorBase {
  readonly kind = "quota_exhausted";
  readonly retryable = true;
  override readonly name = "GatewayQuotaExhaustedError";
  constructor(
    readonly window: QuotaWindow,
    readonly retryAt: Date,
    options?: { cause?: unknown },
  ) {
    super(`the ${window} request quota is used up until ${retryAt.toISOString()}`, options);
  }
}

export type GatewayError =
  | GatewayUnauthorizedError
  | GatewayRejectedError
  | GatewayNotFoundError
  | GatewayThrottledError
  | GatewayServerError
  | GatewayNetworkError
  | GatewayTimeoutError
  | GatewayInvalidResponseError
  | GatewayInvalidRequestError
  | GatewayOutcomeUnknownError
  | GatewayQuotaExhaustedError;

export type GatewayErrorKind = GatewayError["kind"];
