// Waiting for work with a limit: shutdown's allowances, the health check's answer, the answer
// to a payment session.

/**
 * Waits for `work`, `withinMs` at most: true when it settled in time, false when the time ran
 * out first (the work goes on; nothing cancels it). A rejection in time is passed on.
 */
export function settledWithin(work: Promise<unknown>, withinMs: number): Promise<boolean> {
  return valueWithin(
    work.then(() => true),
    withinMs,
    false,
  );
}

/**
 * Waits for `work`, `withinMs` at most: its value when it settled in time, or `late` when the
 * time ran out first (the work goes on; nothing cancels it). A rejection in time is passed on.
 */
export async function valueWithin<T, L>(work: Promise<T>, withinMs: number, late: L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<L>((resolve) => {
    timer = setTimeout(() => resolve(late), withinMs);
  });
  try {
    return await Promise.race([work, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
