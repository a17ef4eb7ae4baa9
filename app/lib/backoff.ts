// When to try a failed background job again: the delay doubles with each attempt from a base
// up to a cap, with ±20% jitter so that jobs that failed together do not return together,
// and never sooner than the other side asked (Retry-After), up to the cap: a wait asked for
// beyond it (a Retry-After of a year from a proxy, a cost-based wait from a tiny restore
// rate) would park the job, a paid order's call to Shopify say, for that long unseen.
export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

/** The delay after the `attempt`-th failed attempt (1 for the first). */
export function backoffMs(attempt: number, policy: BackoffPolicy, random: () => number = Math.random, retryAfterMs?: number | null): number {
  const exponent = Math.min(30, Math.max(0, attempt - 1));
  const base = Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
  // Jittered within the cap: at the cap only downwards, so no wait is ever longer than it.
  const jittered = Math.min(policy.capMs, base * (0.8 + random() * 0.4));
  // A wait that is no number at all asks for nothing.
  const asked = retryAfterMs === null || retryAfterMs === undefined || Number.isNaN(retryAfterMs) ? 0 : Math.min(policy.capMs, retryAfterMs);
  return Math.max(asked, Math.round(jittered));
}
