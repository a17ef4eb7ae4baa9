// Runs an async function over items with at most `limit` in flight (setup work, not measured).
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const index = next++;
      if (index >= items.length) return;
      out[index] = await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Polls `probe` every `everyMs` until it returns a value, or gives up after `timeoutMs` (null). */
export async function pollUntil<T>(probe: () => Promise<T | null> | T | null, timeoutMs: number, everyMs = 20): Promise<T | null> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > until) return null;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
