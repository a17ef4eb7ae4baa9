// Owns when a failed gateway call is tried again and how long to wait first,
// following the service's guidance: on 429 start from Retry-After and double
// on each consecutive 429 and add up to 20 % jitter (upward only: Retry-After is
// a minimum); on 5xx, network failures and timeouts back off exponentially,
// jittered by ±20 %; stop at a cap on attempts and a
// cap on total time. Which failures may be retried at all is the caller's
// call (a POST /orders/ with an unknown outcome must never be resent).
//
// Written here rather than taken from a retry library: the wait depends on the
// kind of failure and on the service's Retry-After, the doubling counts only
// consecutive 429s, and sleep, randomness and clock must be injectable for
// deterministic tests; the general-purpose libraries fit none of these without
// wrapping that is longer than this module.

import type { Result } from "neverthrow";
import type { GatewayError } from "./errors";

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** No wait is started that would end later than this after the first attempt began. */
  maxTotalMs: number;
  /** First backoff after a 5xx, network failure or timeout; doubles each time. */
  baseDelayMs: number;
  /** Ceiling of the 5xx/network/timeout backoff (not of a 429's Retry-After). */
  maxDelayMs: number;
  /** 0.2 spreads a backoff uniformly over ±20 %, and a 429's wait over +0 to +20 %. */
  jitterRatio: number;
  /** Used when a 429 carries no usable Retry-After. */
  defaultRetryAfterSeconds: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = {
  maxAttempts: 5,
  maxTotalMs: 30_000,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  jitterRatio: 0.2,
  defaultRetryAfterSeconds: 1,
};

export interface RetryEnvironment {
  sleep(ms: number): Promise<void>;
  /** Uniform in [0, 1). */
  random(): number;
  clock(): Date;
}

export interface RetryCounters {
  /** 429s in a row just before this wait (1 for the first). */
  consecutiveThrottles: number;
  /** 5xx, network failures and timeouts in a row just before this wait. */
  consecutiveFailures: number;
}

function jitter(ms: number, ratio: number, random: () => number): number {
  return Math.max(0, Math.round(ms * (1 + ratio * (2 * random() - 1))));
}

/** Jitter that only lengthens the wait: never shorter than `ms`. */
function upwardJitter(ms: number, ratio: number, random: () => number): number {
  return Math.max(Math.ceil(ms), Math.round(ms * (1 + ratio * random())));
}

/** How long to wait before the next attempt after `error`. */
export function retryDelayMs(error: GatewayError, counters: RetryCounters, policy: RetryPolicy, random: () => number): number {
  if (error.kind === "throttled") {
    const seconds = error.retryAfterSeconds ?? policy.defaultRetryAfterSeconds;
    const doubled = seconds * 1000 * 2 ** Math.max(0, counters.consecutiveThrottles - 1);
    // Retry-After is the least the gateway asks to wait: jitter may only add to it.
    return upwardJitter(doubled, policy.jitterRatio, random);
  }
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, counters.consecutiveFailures - 1));
  return jitter(backoff, policy.jitterRatio, random);
}

export interface RetryNotice {
  attempt: number;
  error: GatewayError;
  delayMs: number;
}

export interface RunWithRetryOptions {
  policy: RetryPolicy;
  env: RetryEnvironment;
  shouldRetry(error: GatewayError): boolean;
  onRetry?(notice: RetryNotice): void;
  onGiveUp?(notice: { attempt: number; error: GatewayError; reason: "attempts" | "total_time" | "declined" }): void;
  /** Asked after each wait, before the next attempt: false ends with the last result, nothing sent again. */
  beforeRetry?(): Promise<boolean>;
}

/** Runs `attempt` until it succeeds, fails for good, or a cap is reached; returns the last result. */
export async function runWithRetry<T>(
  attempt: (attemptNumber: number) => Promise<Result<T, GatewayError>>,
  options: RunWithRetryOptions,
): Promise<Result<T, GatewayError>> {
  const { policy, env } = options;
  const startedAt = env.clock().getTime();
  const counters: RetryCounters = { consecutiveThrottles: 0, consecutiveFailures: 0 };
  for (let attemptNumber = 1; ; attemptNumber += 1) {
    const result = await attempt(attemptNumber);
    if (result.isOk()) return result;
    const error = result.error;
    if (!options.shouldRetry(error)) return result;

    if (error.kind === "throttled") {
      counters.consecutiveThrottles += 1;
      counters.consecutiveFailures = 0;
    } else {
      counters.consecutiveFailures += 1;
      counters.consecutiveThrottles = 0;
    }
    if (attemptNumber >= policy.maxAttempts) {
      options.onGiveUp?.({ attempt: attemptNumber, error, reason: "attempts" });
      return result;
    }
    const delayMs = retryDelayMs(error, counters, policy, env.random);
    const elapsedMs = env.clock().getTime() - startedAt;
    if (elapsedMs + delayMs > policy.maxTotalMs) {
      options.onGiveUp?.({ attempt: attemptNumber, error, reason: "total_time" });
      return result;
    }
    options.onRetry?.({ attempt: attemptNumber, error, delayMs });
    await env.sleep(delayMs);
    if (options.beforeRetry && !(await options.beforeRetry())) {
      options.onGiveUp?.({ attempt: attemptNumber, error, reason: "declined" });
      return result;
    }
  }
}
