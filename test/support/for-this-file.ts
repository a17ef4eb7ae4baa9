// Something a whole test file shares (a stack, a browser, a sandbox): started before the
// file's first test and stopped after its last, read through a getter from inside the tests.
import { afterAll, beforeAll } from "vitest";

export function forThisFile<T>(what: string, start: () => Promise<T>, stop: (started: T) => Promise<void>, startTimeoutMs?: number): () => T {
  let started: T | undefined;
  beforeAll(async () => {
    started = await start();
  }, startTimeoutMs);
  afterAll(async () => {
    if (started !== undefined) await stop(started);
  });
  return () => {
    if (started === undefined) throw new Error(`${what} is used before beforeAll started it`);
    return started;
  };
}
