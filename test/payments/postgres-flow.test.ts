// The same checkout scenarios as checkout-flow.test.ts, on PostgreSQL, with the background
// workers on their own thread (WORKER_THREAD=true; the crash test runs them on the request thread).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestPostgresDatabase } from "../support/postgres";
import { startStack, type Stack } from "../support/stack";
import { checkoutScenarios } from "./checkout-scenarios";

let stack: Stack;
let database: Awaited<ReturnType<typeof createTestPostgresDatabase>>;
const logLines: string[] = [];

beforeAll(async () => {
  database = await createTestPostgresDatabase();
  stack = await startStack({ databaseUrl: database.url, env: { WORKER_THREAD: "true" }, logLines });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await database?.drop();
});

describe("checkout payments on PostgreSQL", () => {
  checkoutScenarios(() => stack);

  it("ran them with the workers on their own thread, whose log lines reach the app's logger", () => {
    const records = logLines.map((line) => JSON.parse(line) as { msg: string; thread?: string });
    expect(records.some((r) => r.msg === "Background workers run on their own thread")).toBe(true);
    expect(records.some((r) => r.msg === "Background workers started" && r.thread === "workers")).toBe(true);
    // Settling happened there: the workers' own lines come from the thread only.
    expect(records.filter((r) => r.msg === "Background workers started").every((r) => r.thread === "workers")).toBe(true);
  });
});
