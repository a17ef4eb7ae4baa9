// Owns calling the gateway's five endpoints on behalf of one device: it
// authenticates, keeps within the client-side quota, retries only what is safe
// to retry, parses every answer with the schemas, and turns every failure into
// a typed GatewayError. It knows nothing of shops or storage.

import { err, ok, type Result } from "neverthrow";
import type { z } from "zod";
import {
  GatewayInvalidRequestError,
  GatewayInvalidResponseError,
  GatewayNetworkError,
  GatewayNotFoundError,
  GatewayOutcomeUnknownError,
  GatewayQuotaExhaustedError,
  GatewayRejectedError,
  GatewayServerError,
  GatewayThrottledError,
  GatewayTimeoutError,
  GatewayUnauthorizedError,
  type GatewayError,
  type GatewayOperation,
} from "./errors";
import { tryParseGatewayJson } from "./json-numbers";
import { PLAIN_DECIMAL } from "./money";
import {
  createMemoryQuotaStore,
  hashDeviceKey,
  isDayWindow,
  type QuotaClass,
  type QuotaRemaining,
  type QuotaStore,
} from "./quota";
import { DEFAULT_RETRY_POLICY, runWithRetry, type RetryPolicy } from "./retry";
import {
  createOrderRequestSchema,
  createOrderResponseSchema,
  currenciesResponseSchema,
  deviceCreateRequestSchema,
  deviceCreateResponseSchema,
  deviceKeySchema,
  DRF_FIELD_NAME,
  gatewayErrorBodySchema,
  gatewayFieldErrorsBodySchema,
  gatewayFieldErrorsRefusalSchema,
  gatewayOrderIdSchema,
  orderInfoResponseSchema,
  ordersListResponseSchema,
  type CreateOrderRequest,
  type CreateOrderResponse,
  type DeviceCreateResponse,
  type GatewayCurrency,
  type GatewayOrder,
  type GatewayOrderId,
  type GatewayOrderListing,
} from "./schemas";
import { sendOnce, type FetchFunction, type TransportOutcome } from "./transport";

export interface GatewayLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export interface GatewayQuotaOptions {
  /** Share one store between all clients of a process so they see the same budget. */
  store?: QuotaStore;
  /** Longest wait for a free slot in a minute window before failing with quota_exhausted. */
  maxWaitMs?: number;
}

export interface GatewayClientOptions {
  /** The service's base address, version prefix included (e.g. ending in /api/v1). */
  baseUrl: string;
  deviceKey: string;
  fetch?: FetchFunction;
  /** Limit for one attempt, from sending to the end of the answer. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  quota?: GatewayQuotaOptions;
  clock?: () => Date;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  logger?: GatewayLogger;
}

/**
 * A tighter budget for one call than the client's own: for a read someone waits on (a
 * shopper's page or return), one short attempt beats a long retried one, as the page follows
 * the payment anyway.
 */
export interface CallBudget {
  /** Limit for one attempt (the client's timeoutMs otherwise). */
  timeoutMs?: number;
  /** Over the client's retry policy. */
  retry?: Partial<RetryPolicy>;
  /** Longest wait for a free quota slot (the client's quota maxWaitMs otherwise). */
  quotaMaxWaitMs?: number;
}

export interface ListOrdersRange {
  /** Inclusive; a Date is taken in UTC. The service defaults to 7 days ago. */
  start?: Date | string;
  /** Inclusive; a Date is taken in UTC. The service defaults to today. */
  end?: Date | string;
}

export interface GatewayClient {
  /** `budget`: the call's limits when someone waits on it (one attempt, a short timeout). */
  currencies(budget?: CallBudget): Promise<Result<GatewayCurrency[], GatewayError>>;
  createDevice(name: string): Promise<Result<DeviceCreateResponse, GatewayError>>;
  /**
   * The device's orders. An element that is not a readable order is logged and set aside in
   * `unreadable` (see GatewayOrderListing): the others are still returned.
   */
  listOrders(range?: ListOrdersRange, budget?: CallBudget): Promise<Result<GatewayOrderListing, GatewayError>>;
  /** Never resent once it may have reached the service: see GatewayOutcomeUnknownError. */
  createOrder(request: CreateOrderRequest): Promise<Result<CreateOrderResponse, GatewayError>>;
  /**
   * createOrder in two steps: checks the request and takes its quota slot now, sends nothing.
   * The caller can record that it is about to send while the slot is taken, then send.
   */
  prepareOrder(request: CreateOrderRequest): Promise<Result<PreparedOrder, GatewayError>>;
  orderInfo(identifier: GatewayOrderId | string, budget?: CallBudget): Promise<Result<GatewayOrder, GatewayError>>;
  quotaRemaining(): Promise<QuotaRemaining>;
}

/** An order checked and holding its quota slot, not sent yet. */
export interface PreparedOrder {
  /**
   * Sends the order on the slot already taken (a retry after a 429 or a failed connection
   * takes a slot of its own), as createOrder would. Once only; a slot never sent stays
   * counted, which errs on the side of the gateway's throttle. `mayResend` is asked before
   * each resend (after a 429 or a connection that failed before sending): false ends with
   * the last error, nothing sent again.
   */
  send(options?: { mayResend?: () => Promise<boolean> }): Promise<Result<CreateOrderResponse, GatewayError>>;
  /** Gives the slot back instead of sending: the order will never be sent (nothing, once it was). */
  release(): Promise<void>;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_QUOTA_MAX_WAIT_MS = 10_000;

interface CallSpec<T> {
  operation: GatewayOperation;
  method: "GET" | "POST";
  path: string;
  body?: string;
  quotaClass: QuotaClass;
  schema: z.ZodType<T, z.ZodTypeDef, unknown>;
  /** Creating calls are not idempotent on the service. */
  creates: boolean;
  reference?: string | null;
}

function normaliseBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    throw new Error("gateway baseUrl is not an absolute URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("gateway baseUrl must be http(s)");
  if (url.search !== "" || url.hash !== "") throw new Error("gateway baseUrl must not carry a query or fragment");
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

function zodIssueError<E>(error: z.ZodError, make: (path: (string | number)[], reason: string) => E): E {
  const issue = error.issues[0];
  return make(issue?.path ?? [], issue?.message ?? "invalid");
}

const DATE_TEXT = /^(\d{4})\/(\d{2})\/(\d{2})$/;

/** "YYYY/MM/DD" in UTC, or null when the input is not a real calendar date. */
export function formatGatewayDate(value: Date | string): string | null {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return null;
    const y = String(value.getUTCFullYear()).padStart(4, "0");
    const m = String(value.getUTCMonth() + 1).padStart(2, "0");
    const d = String(value.getUTCDate()).padStart(2, "0");
    return `${y}/${m}/${d}`;
  }
  const match = DATE_TEXT.exec(value);
  if (match === null) return null;
  const [, y, m, d] = match.map(Number) as [number, number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  const roundTrips = date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
  return roundTrips ? value : null;
}

/**
 * The longest wait a Retry-After is taken for: the gateway's longest throttle window is a day
 * (SPEC.md). A larger value (a CDN's or a firewall's in front of it) would otherwise hold every
 * call of the device, its orders too, for as long as it says, until the process restarts.
 */
const MAX_RETRY_AFTER_SECONDS = 86_400;

function parseRetryAfter(header: string | null, now: Date): number | null {
  if (header === null) return null;
  const text = header.trim();
  let seconds: number;
  if (PLAIN_DECIMAL.test(text)) seconds = Number(text);
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return null;
    seconds = Math.ceil((at - now.getTime()) / 1000);
  }
  // No wait at all (0, or a date already past) says nothing: the default wait, doubled on each 429, applies.
  if (!(seconds > 0)) return null;
  return Math.min(seconds, MAX_RETRY_AFTER_SECONDS);
}

/** The longest detail made of a field-error body. */
const FIELD_ERRORS_DETAIL_MAX = 500;

/**
 * A DRF field-error body as one line, "field: message; other: message" (non_field_errors'
 * messages without a name), at most FIELD_ERRORS_DETAIL_MAX characters. Only field names and
 * the gateway's text messages are kept; anything else in the body (nested objects) is left out.
 */
function fieldErrorsDetail(value: unknown): string | null {
  const body = gatewayFieldErrorsBodySchema.safeParse(value);
  if (!body.success) return null;
  const parts: string[] = [];
  for (const [field, errors] of Object.entries(body.data)) {
    if (!DRF_FIELD_NAME.test(field)) continue;
    const messages = (Array.isArray(errors) ? errors : [errors])
      .filter((message): message is string => typeof message === "string")
      .map((message) => message.replace(/\s+/g, " ").trim())
      .filter((message) => message !== "");
    if (messages.length === 0) continue;
    parts.push(field === "non_field_errors" ? messages.join(" ") : `${field}: ${messages.join(" ")}`);
  }
  if (parts.length === 0) return null;
  const line = [...parts.join("; ")];
  return line.length <= FIELD_ERRORS_DETAIL_MAX ? line.join("") : `${line.slice(0, FIELD_ERRORS_DETAIL_MAX - 1).join("")}…`;
}

/** The gateway's reason in an error body: its `detail`, or else its DRF field errors flattened; null when neither. */
function errorDetail(text: string): string | null {
  const parsed = tryParseGatewayJson(text);
  if (!parsed.ok) return null;
  const body = gatewayErrorBodySchema.safeParse(parsed.value);
  return body.success ? body.data.detail : fieldErrorsDetail(parsed.value);
}

/** Whether a body is the gateway's own error answer ({"detail": "..."}), not some server's page in front of it. */
function isGatewayErrorBody(text: string): boolean {
  const parsed = tryParseGatewayJson(text);
  return parsed.ok && gatewayErrorBodySchema.safeParse(parsed.value).success;
}

/**
 * Whether a body is the gateway's own refusal of a request: its {"detail": "..."}, or DRF's
 * field errors, every field a list of messages ({"field": ["message"]}). A proxy's page, or an
 * API gateway's {"message": "no route matched"}, is neither.
 */
function isGatewayRefusalBody(text: string): boolean {
  const parsed = tryParseGatewayJson(text);
  return parsed.ok && (gatewayErrorBodySchema.safeParse(parsed.value).success || gatewayFieldErrorsRefusalSchema.safeParse(parsed.value).success);
}

function serialiseCreateOrder(request: z.output<typeof createOrderRequestSchema>): string {
  // The amount is written as a JSON number straight from its decimal text, so
  // it never passes through a float on the way out either.
  const { expected_output_amount, ...rest } = request;
  const others = JSON.stringify(rest).slice(1, -1);
  return `{"expected_output_amount":${expected_output_amount}${others === "" ? "" : `,${others}`}}`;
}

export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const baseUrl = normaliseBaseUrl(options.baseUrl);
  const key = deviceKeySchema.safeParse(options.deviceKey);
  if (!key.success) throw new Error(`gateway deviceKey is invalid: ${key.error.issues[0]?.message ?? "invalid"}`);
  const deviceKey = key.data;
  const keyHash = hashDeviceKey(deviceKey);

  const fetchFn = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const quotaStore = options.quota?.store ?? createMemoryQuotaStore();
  const quotaMaxWaitMs = options.quota?.maxWaitMs ?? DEFAULT_QUOTA_MAX_WAIT_MS;
  const clock = options.clock ?? (() => new Date());
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  const logger = options.logger;

  async function acquireQuota(cls: QuotaClass, operation: GatewayOperation, maxWaitMs = quotaMaxWaitMs): Promise<GatewayQuotaExhaustedError | null> {
    const taken = await takeSlot(cls, operation, maxWaitMs);
    return taken instanceof GatewayQuotaExhaustedError ? taken : null;
  }

  /** A slot of `cls` and the time it was taken at (to give it back); the error when none frees in time. */
  async function takeSlot(cls: QuotaClass, operation: GatewayOperation, maxWaitMs = quotaMaxWaitMs): Promise<GatewayQuotaExhaustedError | { at: Date }> {
    const deadline = clock().getTime() + maxWaitMs;
    // Bounded so that a clock that never moves cannot spin forever.
    for (let round = 0; round < 100; round += 1) {
      const now = clock();
      const taken = await quotaStore.take(keyHash, cls, now);
      if (taken.ok) return { at: now };
      const waitMs = Math.max(1, taken.retryAt.getTime() - now.getTime());
      if (isDayWindow(taken.window) || now.getTime() + waitMs > deadline) {
        logger?.warn("gateway quota exhausted", { operation, window: taken.window, retryAt: taken.retryAt.toISOString() });
        return new GatewayQuotaExhaustedError(taken.window, taken.retryAt);
      }
      logger?.info("gateway quota: waiting for a free slot", { operation, window: taken.window, waitMs });
      await sleep(waitMs);
    }
    const remaining = await quotaStore.remaining(keyHash, clock());
    logger?.warn("gateway quota: no slot freed while waiting", { operation, remaining });
    return new GatewayQuotaExhaustedError(cls === "critical" ? "critical_minute" : "general_minute", new Date(deadline));
  }

  function toResult<T>(spec: CallSpec<T>, outcome: TransportOutcome, attemptTimeoutMs: number): Result<T, GatewayError> {
    switch (outcome.kind) {
      case "timeout":
        return err(new GatewayTimeoutError(attemptTimeoutMs, { cause: outcome.cause }));
      case "network":
        return err(new GatewayNetworkError(outcome.code, outcome.beforeSend, { cause: outcome.cause }));
      case "response":
        break;
    }
    const { status, text } = outcome;
    if (status >= 200 && status < 300) {
      const json = tryParseGatewayJson(text);
      if (!json.ok) return err(new GatewayInvalidResponseError([], "the body is not JSON"));
      const parsed = spec.schema.safeParse(json.value);
      if (!parsed.success) {
        return err(zodIssueError(parsed.error, (path, reason) => new GatewayInvalidResponseError(path, reason, { cause: parsed.error })));
      }
      return ok(parsed.data);
    }
    // The gateway refuses a device key with its own {"detail": ...}. A 401 or 403 page of a
    // firewall, CDN or proxy in front of it says nothing of the key: like a 5xx, a read is tried
    // again and a creation's outcome is unknown, never a refusal of the shopper's checkout.
    if (status === 401 || status === 403) return err(isGatewayErrorBody(text) ? new GatewayUnauthorizedError(status) : new GatewayServerError(status));
    if (status === 404) {
      // A 404 page of a proxy, CDN or ingress in front of the gateway (a deploy rerouting, a
      // moved path) says nothing of the request. On a read it is a failed read, retried, never
      // proof the order is gone; on a creation, no refusal of the order (which the shopper
      // could not pay with any other coin), but an answer that is not the gateway's: the
      // outcome is unknown, and the order is looked up before another is made.
      if (spec.operation === "create_order" || spec.operation === "create_device") {
        return err(isGatewayRefusalBody(text) ? new GatewayRejectedError(404, errorDetail(text)) : new GatewayServerError(404));
      }
      // "No such order" is the gateway's own answer, DRF's {"detail": ...}.
      return err(isGatewayErrorBody(text) ? new GatewayNotFoundError(errorDetail(text)) : new GatewayServerError(404));
    }
    if (status === 429) return err(new GatewayThrottledError(parseRetryAfter(outcome.headers.get("retry-after"), clock())));
    // A redirect (not followed: it would resend a POST as a GET) is no answer about the request:
    // something in front of the gateway moved it, or a POST was taken and its result put
    // elsewhere (303). Like a 5xx: a read is tried again, a creation's outcome is unknown.
    if (status >= 500 || (status >= 300 && status < 400)) return err(new GatewayServerError(status));
    return err(new GatewayRejectedError(status, errorDetail(text)));
  }

  // For a creating call, any failure after the request may have been received
  // leaves its effect unknown; reporting that (instead of resending) is what
  // keeps a shopper from being charged twice.
  function settleCreating<T>(spec: CallSpec<T>, result: Result<T, GatewayError>): Result<T, GatewayError> {
    if (!spec.creates || result.isOk()) return result;
    const error = result.error;
    const unknown =
      error.kind === "timeout" ||
      error.kind === "server_error" ||
      error.kind === "invalid_response" ||
      (error.kind === "network" && !error.beforeSend);
    if (!unknown) return result;
    const operation = spec.operation === "create_device" ? "create_device" : "create_order";
    logger?.error("gateway call outcome unknown; not resent", { operation, cause: error.kind, reference: spec.reference ?? null });
    return err(new GatewayOutcomeUnknownError(operation, spec.reference ?? null, { cause: error }));
  }

  function shouldRetry(spec: CallSpec<unknown>, error: GatewayError): boolean {
    if (error.kind === "throttled") return true;
    if (error.kind === "network" && error.beforeSend) return true;
    if (spec.creates) return false;
    return error.kind === "server_error" || error.kind === "network" || error.kind === "timeout";
  }

  /**
   * `slotTaken`: the first attempt's quota slot was taken already (a prepared order); `mayResend`:
   * asked before each retry; `budget`: tighter limits for this call.
   */
  async function call<T>(spec: CallSpec<T>, slotTaken = false, mayResend?: () => Promise<boolean>, budget: CallBudget = {}): Promise<Result<T, GatewayError>> {
    const headers: Record<string, string> = { "X-Device-Id": deviceKey, Accept: "application/json" };
    if (spec.body !== undefined) headers["Content-Type"] = "application/json";
    const url = `${baseUrl}${spec.path}`;
    const attemptTimeoutMs = budget.timeoutMs ?? timeoutMs;
    let takenSlot = slotTaken;
    const callPolicy = budget.retry ? { ...policy, ...budget.retry } : policy;
    return runWithRetry(
      async () => {
        const quotaError = takenSlot ? null : await acquireQuota(spec.quotaClass, spec.operation, budget.quotaMaxWaitMs);
        takenSlot = false;
        if (quotaError !== null) return err(quotaError);
        const outcome = await sendOnce(fetchFn, { url, method: spec.method, headers, body: spec.body }, attemptTimeoutMs);
        const result = toResult(spec, outcome, attemptTimeoutMs);
        // The gateway said when it takes the device's calls again: the device's other calls of the
        // throttled kind wait for it too (a creation's 429 holds creations, not the reads the gateway still answers).
        // A 429 that does not say (a proxy's in front of the gateway) holds them for the wait this
        // call's own retry takes, so they do not go into the throttle ahead of it.
        if (result.isErr() && result.error.kind === "throttled") {
          const seconds = result.error.retryAfterSeconds ?? callPolicy.defaultRetryAfterSeconds;
          quotaStore.holdUntil(keyHash, new Date(clock().getTime() + seconds * 1000), spec.quotaClass);
        }
        return settleCreating(spec, result);
      },
      {
        policy: callPolicy,
        env: { sleep, random, clock },
        shouldRetry: (error) => shouldRetry(spec, error),
        onRetry: ({ attempt, error, delayMs }) =>
          logger?.warn("gateway call failed; retrying", { operation: spec.operation, attempt, error: error.kind, delayMs }),
        onGiveUp: ({ attempt, error, reason }) =>
          logger?.warn("gateway call failed; giving up", { operation: spec.operation, attempt, error: error.kind, reason }),
        ...(mayResend ? { beforeRetry: mayResend } : {}),
      },
    );
  }

  async function prepareOrder(request: CreateOrderRequest): Promise<Result<PreparedOrder, GatewayError>> {
    const parsed = createOrderRequestSchema.safeParse(request);
    if (!parsed.success) {
      return err(zodIssueError(parsed.error, (path, reason) => new GatewayInvalidRequestError(path, reason)));
    }
    const spec: CallSpec<CreateOrderResponse> = {
      operation: "create_order",
      method: "POST",
      path: "/orders/",
      body: serialiseCreateOrder(parsed.data),
      quotaClass: "critical",
      schema: createOrderResponseSchema,
      creates: true,
      reference: parsed.data.reference ?? null,
    };
    const slot = await takeSlot(spec.quotaClass, spec.operation);
    if (slot instanceof GatewayQuotaExhaustedError) return err(slot);
    let sent = false;
    return ok({
      send(sendOptions) {
        if (sent) throw new Error("a prepared gateway order is sent once only");
        sent = true;
        return call(spec, true, sendOptions?.mayResend);
      },
      async release() {
        if (sent) return;
        sent = true;
        await quotaStore.giveBack?.(keyHash, spec.quotaClass, slot.at);
      },
    });
  }

  return {
    async currencies(budget) {
      const listed = await call(
        {
          operation: "currencies",
          method: "GET",
          path: "/currencies",
          quotaClass: "general",
          schema: currenciesResponseSchema,
          creates: false,
        },
        false,
        undefined,
        budget,
      );
      for (const coin of listed.isOk() ? listed.value.unreadable : []) {
        logger?.warn("gateway coin list: a coin could not be read; set aside", { operation: "currencies", symbol: coin.symbol, path: coin.path.join("."), reason: coin.reason });
      }
      return listed.map((list) => list.currencies);
    },

    async createDevice(name) {
      const request = deviceCreateRequestSchema.safeParse({ name });
      if (!request.success) {
        return err(zodIssueError(request.error, (path, reason) => new GatewayInvalidRequestError(path, reason)));
      }
      return call({
        operation: "create_device",
        method: "POST",
        path: "/device/",
        body: JSON.stringify(request.data),
        quotaClass: "critical",
        schema: deviceCreateResponseSchema,
        creates: true,
      });
    },

    async listOrders(range = {}, budget) {
      const query: string[] = [];
      const dates: Partial<Record<"start" | "end", string>> = {};
      for (const field of ["start", "end"] as const) {
        const value = range[field];
        if (value === undefined) continue;
        const formatted = formatGatewayDate(value);
        if (formatted === null) {
          return err(new GatewayInvalidRequestError([field], "must be a valid Date or a YYYY/MM/DD date"));
        }
        dates[field] = formatted;
        query.push(`${field}=${formatted}`);
      }
      if (dates.start !== undefined && dates.end !== undefined && dates.start > dates.end) {
        return err(new GatewayInvalidRequestError(["start"], "start is after end"));
      }
      const listed = await call(
        {
          operation: "list_orders",
          method: "GET",
          path: `/orders/${query.length === 0 ? "" : `?${query.join("&")}`}`,
          quotaClass: "general",
          schema: ordersListResponseSchema,
          creates: false,
        },
        false,
        undefined,
        budget,
      );
      // Its identifier and where the schema refused it, as an invalid_response error would tell.
      for (const element of listed.isOk() ? listed.value.unreadable : []) {
        logger?.warn("gateway listing: an order could not be read; set aside", {
          operation: "list_orders",
          identifier: element.identifier,
          path: element.path.join("."),
          reason: element.reason,
        });
      }
      return listed;
    },

    async createOrder(request) {
      const prepared = await prepareOrder(request);
      return prepared.isOk() ? prepared.value.send() : err(prepared.error);
    },

    prepareOrder,

    async orderInfo(identifier, budget) {
      const id = gatewayOrderIdSchema.safeParse(identifier);
      if (!id.success) return err(new GatewayInvalidRequestError(["identifier"], "must be a UUID"));
      return call(
        {
          operation: "order_info",
          method: "GET",
          path: `/orders/info/${encodeURIComponent(id.data)}`,
          quotaClass: "general",
          schema: orderInfoResponseSchema,
          creates: false,
        },
        false,
        undefined,
        budget,
      );
    },

    quotaRemaining() {
      return quotaStore.remaining(keyHash, clock());
    },
  };
}
