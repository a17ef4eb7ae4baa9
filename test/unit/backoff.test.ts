// The background jobs' retry delay: doubling from the base, capped, jittered by ±20%, and
// never sooner than a Retry-After.
import fc from "fast-check";
import { expect, it } from "vitest";
import { backoffMs } from "../../app/lib/backoff";

const policy = { baseMs: 1_000, capMs: 600_000 };

it("stays within ±20% of the doubled base, under the cap, and honours Retry-After", () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 200 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), fc.option(fc.integer({ min: 0, max: 3_600_000 })), (attempt, r, retryAfter) => {
      const nominal = Math.min(policy.capMs, policy.baseMs * 2 ** (attempt - 1));
      const delay = backoffMs(attempt, policy, () => r, retryAfter);
      expect(delay).toBeGreaterThanOrEqual(Math.max(retryAfter ?? 0, Math.floor(nominal * 0.8)));
      expect(delay).toBeLessThanOrEqual(Math.max(retryAfter ?? 0, Math.ceil(nominal * 1.2)));
    }),
  );
});

it("doubles from one attempt to the next until the cap", () => {
  const middle = () => 0.5; // no jitter
  expect([1, 2, 3, 4].map((n) => backoffMs(n, policy, middle))).toEqual([1_000, 2_000, 4_000, 8_000]);
  expect(backoffMs(50, policy, middle)).toBe(600_000);
});
