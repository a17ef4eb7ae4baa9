// Work that holds a lease in the database (a claim with an expiry) renews it while it runs,
// so that the lease lapses only when the process stops, never while the work is still going.

/**
 * Runs `work`, calling `renew` every `everyMs` until it ends. A failed renewal is reported to
 * `onError` and the work goes on: the lease is still held until it expires.
 */
export async function whileRenewing<T>(renew: () => Promise<unknown>, everyMs: number, onError: (error: unknown) => void, work: () => Promise<T>): Promise<T> {
  const renewal = setInterval(() => {
    renew().catch(onError);
  }, everyMs);
  renewal.unref();
  try {
    return await work();
  } finally {
    clearInterval(renewal);
  }
}
