// The background jobs' retry delay: doubling from the base, jittered by ±20% within the cap
// (never longer than it, as the merchant is told), and never sooner than a Retry-After, which
// is obeyed up to the cap and no further.
import fc from "fast-check";
import { expect, it } from "vitest";
import { backoffMs } from "../../app/lib/backoff";

const policy = { baseMs: 1_000, capMs: 600_000 };
const YEAR_MS = 365 * 86_400_000;

it("stays within ±20% of the doubled base and never past the cap, and honours Retry-After up to the cap", () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 200 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), fc.option(fc.integer({ min: 0, max: YEAR_MS })), (attempt, r, retryAfter) => {
      const nominal = Math.min(policy.capMs, policy.baseMs * 2 ** (attempt - 1));
      const asked = Math.min(policy.capMs, retryAfter ?? 0);
      const delay = backoffMs(attempt, policy, () => r, retryAfter);
      expect(delay).toBeGreaterThanOrEqual(Math.max(asked, Math.floor(nominal * 0.8)));
      expect(delay).toBeLessThanOrEqual(Math.max(asked, Math.min(policy.capMs, Math.ceil(nominal * 1.2))));
      expect(delay).toBeLessThanOrEqual(policy.capMs);
    }),
  );
});

it("doubles from one attempt to the next until the cap", () => {
  const middle = () => 0.5; // no jitter
  expect([1, 2, 3, 4].map((n) => backoffMs(n, policy, middle))).toEqual([1_000, 2_000, 4_000, 8_000]);
  expect(backoffMs(50, policy, middle)).toBe(600_000);
});

it("waits the cap, not a year, when the other side asks for a year or for ever; a wait that is no number asks for nothing", () => {
  const middle = () => 0.5;
  expect(backoffMs(1, policy, middle, YEAR_MS)).toBe(600_000);
  expect(backoffMs(1, policy, middle, Number.POSITIVE_INFINITY)).toBe(600_000);
  expect(backoffMs(1, policy, middle, Number.NaN)).toBe(1_000);
  expect(backoffMs(1, policy, middle, 120_000)).toBe(120_000);
  // The webhook inbox's shorter cap holds too.
  expect(backoffMs(1, { baseMs: 2_000, capMs: 300_000 }, middle, YEAR_MS)).toBe(300_000);
});

it("waits at most the cap late in the retries, the jitter taking it only downwards there", () => {
  expect(backoffMs(20, policy, () => 0.999)).toBe(600_000);
  expect(backoffMs(20, policy, () => 0.999, YEAR_MS)).toBe(600_000);
  expect(backoffMs(20, policy, () => 0)).toBe(480_000);
});
