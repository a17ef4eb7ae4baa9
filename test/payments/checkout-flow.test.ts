// Checkout payments end to end: the real app server and routes, a real database (SQLite
// here; test/payments/postgres-flow.test.ts runs the same scenarios on PostgreSQL), the
// gateway sandbox over HTTP and the Shopify stand-in validating every operation against
// the Payments Apps schema.
import { afterAll, beforeAll, describe } from "vitest";
import { startStack, type Stack } from "../support/stack";
import { checkoutScenarios } from "./checkout-scenarios";

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

describe("checkout payments on SQLite", () => {
  checkoutScenarios(() => stack);
});
