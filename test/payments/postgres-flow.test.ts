// The same checkout scenarios as checkout-flow.test.ts, on PostgreSQL.
import { afterAll, beforeAll, describe } from "vitest";
import { createTestPostgresDatabase } from "../support/postgres";
import { startStack, type Stack } from "../support/stack";
import { checkoutScenarios } from "./checkout-scenarios";

let stack: Stack;
let database: Awaited<ReturnType<typeof createTestPostgresDatabase>>;

beforeAll(async () => {
  database = await createTestPostgresDatabase();
  stack = await startStack({ databaseUrl: database.url });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await database?.drop();
});

describe("checkout payments on PostgreSQL", () => {
  checkoutScenarios(() => stack);
});
