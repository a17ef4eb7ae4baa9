import { err, ok } from "neverthrow";
import { describe, expect, it } from "vitest";
import { GatewayServerError, GatewayThrottledError, GatewayUnauthorizedError, type GatewayError } from "../../app/gateway/errors";
import { DEFAULT_RETRY_POLICY, retryDelayMs, runWithRetry } from "../../app/gateway/retry";

const policy = { ...DEFAULT_RETRY_POLICY };

describe("retryDelayMs", () => {
  it("starts a 429 from Retry-After and doubles it on each consecutive 429", () => {
    const error = new GatewayThrottledError(3);
    const none = () => 0; // no jitter: a 429's jitter only adds
    expect([1, 2, 3, 4].map((n) => retryDelayMs(error, { consecutiveThrottles: n, consecutiveFailures: 0 }, policy, none))).toEqual([
      3_000, 6_000, 12_000, 24_000,
    ]);
  });

  it("jitters a 429's wait upward only, by up to 20 %", () => {
    const error = new GatewayThrottledError(10);
    const counters = { consecutiveThrottles: 1, consecutiveFailures: 0 };
    expect(retryDelayMs(error, counters, policy, () => 0)).toBe(10_000);
    expect(retryDelayMs(error, counters, policy, () => 0.5)).toBe(11_000);
    expect(retryDelayMs(error, counters, policy, () => 0.999_999)).toBe(12_000);
    for (let i = 0; i < 200; i += 1) {
      const ms = retryDelayMs(error, counters, policy, Math.random);
      expect(ms).toBeGreaterThanOrEqual(10_000);
      expect(ms).toBeLessThanOrEqual(12_000);
    }
  });

  it("never retries a 429 before its Retry-After, whatever the jitter draws (Retry-After is a minimum)", () => {
    for (const seconds of [0.5, 1, 1.0005, 10]) {
      for (const throttles of [1, 2, 3]) {
        const least = seconds * 1000 * 2 ** (throttles - 1);
        for (const draw of [0, 0.000_001, 0.25, 0.5, 0.999_999]) {
          const ms = retryDelayMs(new GatewayThrottledError(seconds), { consecutiveThrottles: throttles, consecutiveFailures: 0 }, policy, () => draw);
          expect(ms, `${seconds} s, ${throttles} in a row, draw ${draw}`).toBeGreaterThanOrEqual(least);
        }
      }
    }
  });

  it("keeps ±20 % jitter for the 5xx, network and timeout backoff", () => {
    const error = new GatewayServerError(503);
    const counters = { consecutiveThrottles: 0, consecutiveFailures: 3 };
    expect(retryDelayMs(error, counters, policy, () => 0)).toBe(1_600);
    expect(retryDelayMs(error, counters, policy, () => 0.5)).toBe(2_000);
    expect(retryDelayMs(error, counters, policy, () => 0.999_999)).toBe(2_400);
  });

  it("uses the default when a 429 has no Retry-After", () => {
    expect(retryDelayMs(new GatewayThrottledError(null), { consecutiveThrottles: 1, consecutiveFailures: 0 }, policy, () => 0)).toBe(1_000);
  });

  it("backs off exponentially after 5xx up to the ceiling", () => {
    const error = new GatewayServerError(503);
    const delays = [1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(error, { consecutiveThrottles: 0, consecutiveFailures: n }, policy, () => 0.5));
    expect(delays).toEqual([500, 1_000, 2_000, 4_000, 8_000, 8_000]);
  });
});

describe("runWithRetry", () => {
  function fakeEnv() {
    let now = 0;
    const sleeps: number[] = [];
    return {
      sleeps,
      env: {
        clock: () => new Date(now),
        random: () => 0.5,
        sleep: async (ms: number) => {
          sleeps.push(ms);
          now += ms;
        },
      },
    };
  }

  it("counts only consecutive 429s when doubling", async () => {
    const { env, sleeps } = fakeEnv();
    const answers: GatewayError[] = [new GatewayThrottledError(1), new GatewayThrottledError(1), new GatewayServerError(500), new GatewayThrottledError(1)];
    let calls = 0;
    const result = await runWithRetry(
      async () => {
        const next = answers[calls];
        calls += 1;
        return next === undefined ? ok("done") : err(next);
      },
      { policy: { ...policy, maxAttempts: 10 }, env, shouldRetry: () => true },
    );
    expect(result._unsafeUnwrap()).toBe("done");
    // The midpoint draw leaves a backoff as it is and adds 10 % to a 429's wait.
    expect(sleeps).toEqual([1_100, 2_200, 500, 1_100]);
  });

  it("does not retry what shouldRetry refuses", async () => {
    const { env, sleeps } = fakeEnv();
    let calls = 0;
    const result = await runWithRetry(
      async () => {
        calls += 1;
        return err(new GatewayUnauthorizedError());
      },
      { policy, env, shouldRetry: (e) => e.retryable },
    );
    expect(result._unsafeUnwrapErr().kind).toBe("unauthorized");
    expect(calls).toBe(1);
    expect(sleeps).toEqual([]);
  });

  it("asks before each retry, and ends with the last result when declined", async () => {
    const { env, sleeps } = fakeEnv();
    let calls = 0;
    const asked: number[] = [];
    const result = await runWithRetry(
      async () => {
        calls += 1;
        return err(new GatewayServerError(500));
      },
      { policy, env, shouldRetry: () => true, beforeRetry: async () => (asked.push(calls), calls < 2) },
    );
    expect(result._unsafeUnwrapErr().kind).toBe("server_error");
    expect(calls).toBe(2);
    expect(asked).toEqual([1, 2]);
    expect(sleeps).toEqual([500, 1_000]);
  });
});
