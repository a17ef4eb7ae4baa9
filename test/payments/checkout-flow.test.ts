// Checkout payments end to end: the real app server and routes, a real database (SQLite
// here; test/payments/postgres-flow.test.ts runs the same scenarios on PostgreSQL), the
// gateway sandbox over HTTP and the Shopify stand-in validating every operation against
// the Payments Apps schema.
import { describe } from "vitest";
import { stackForFile } from "../support/stack";
import { checkoutScenarios } from "./checkout-scenarios";

const stack = stackForFile();

describe("checkout payments on SQLite", () => {
  checkoutScenarios(stack);
});
