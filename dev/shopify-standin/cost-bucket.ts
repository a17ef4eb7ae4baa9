// Shopify's cost-based rate limit of a GraphQL API, as a leaky bucket: each request asks for
// its cost in points; the bucket holds at most `maximumAvailable` and fills again at
// `restoreRate` points a second. A request the bucket cannot pay for is answered THROTTLED
// and costs nothing; the answer's throttle status tells how long to wait.
export interface CostLimit {
  maximumAvailable: number;
  restoreRate: number;
}

export interface ThrottleStatus {
  maximumAvailable: number;
  currentlyAvailable: number;
  restoreRate: number;
}

/** What the stand-in charges a request: Shopify's cost of a mutation (a query asks for as much here). */
export const REQUEST_COST = 10;

/** The bucket a shop has on Shopify's standard plan: what an answer reports when the stand-in keeps no cost limit. */
export const STANDARD_COST_LIMIT: Readonly<CostLimit> = { maximumAvailable: 1000, restoreRate: 50 };

/** Shopify's answer to a request its cost limit refused, the bucket as `status` says it is. */
export function throttledAnswer(status: ThrottleStatus) {
  return {
    errors: [{ message: "Throttled", extensions: { code: "THROTTLED" } }],
    extensions: { cost: { requestedQueryCost: REQUEST_COST, actualQueryCost: null, throttleStatus: status } },
  };
}

export class CostBucket {
  #available: number;
  #at: number;

  constructor(
    private readonly limit: CostLimit,
    private readonly nowMs: () => number,
  ) {
    this.#available = limit.maximumAvailable;
    this.#at = nowMs();
  }

  /** Pays `cost` if the bucket holds it: whether it did, and the bucket as the answer reports it. */
  take(cost: number): { paid: boolean; status: ThrottleStatus } {
    const now = this.nowMs();
    this.#available = Math.min(this.limit.maximumAvailable, this.#available + ((now - this.#at) / 1000) * this.limit.restoreRate);
    this.#at = now;
    const paid = this.#available >= cost;
    if (paid) this.#available -= cost;
    return { paid, status: { ...this.limit, currentlyAvailable: Math.floor(this.#available) } };
  }
}
