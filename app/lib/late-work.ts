// Work a request goes on with after it was answered (a payment session answered "in progress"
// while its gateway order is still being made): stopping the instance waits for it, within an
// allowance, before the database is closed under it.
import { settledWithin } from "./deadline";

export interface LateWork {
  /** Follows `work` until it settles (its failure is the caller's to handle). */
  track(work: Promise<unknown>): void;
  /** Whether everything tracked settled within `withinMs`. */
  settled(withinMs: number): Promise<boolean>;
}

export function createLateWork(): LateWork {
  const pending = new Set<Promise<unknown>>();
  return {
    track(work) {
      const followed = work.then(
        () => undefined,
        () => undefined,
      );
      pending.add(followed);
      void followed.then(() => pending.delete(followed));
    },
    settled(withinMs) {
      return pending.size === 0 ? Promise.resolve(true) : settledWithin(Promise.all(pending), withinMs);
    },
  };
}
