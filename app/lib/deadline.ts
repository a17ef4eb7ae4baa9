// Waiting for work with a limit: shutdown's allowances, the health check's answer.

/**
 * Waits for `work`, `withinMs` at most: true when it settled in time, false when the time ran
 * out first (the work goes on; nothing cancels it). A rejection in time is passed on.
 */
export async function settledWithin(work: Promise<unknown>, withinMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), withinMs);
  });
  try {
    return await Promise.race([work.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
