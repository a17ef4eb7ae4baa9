// settledWithin: the wait with a limit that shutdown and the health check use.
import { expect, it } from "vitest";
import { settledWithin } from "../../app/lib/deadline";

const after = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

it("is true for work that settles in time, false once the time runs out first, and passes on a rejection in time", async () => {
  expect(await settledWithin(after(5), 1_000)).toBe(true);
  const slow = after(300);
  expect(await settledWithin(slow, 20)).toBe(false);
  await slow;
  await expect(settledWithin(Promise.reject(new Error("no database")), 1_000)).rejects.toThrow("no database");
});
