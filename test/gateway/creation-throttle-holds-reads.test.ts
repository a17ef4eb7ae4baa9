// A 429 answered to an order creation (POST /orders/, a critical call) says the device's
// creations are throttled: SPEC.md's strict throttles (15/min, 200/day) count only critical
// endpoints, and the gateway still answers the device's reads. The client's hold after such a
// 429 must not stop the reads that settle paid orders (a webhook's GET /orders/info, the
// reconciler's listing, a shopper's return) until the Retry-After, which for the daily
// creation budget is hours away.
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGatewayClient } from "../../app/gateway/client";
import { createMemoryQuotaStore } from "../../app/gateway/quota";
import { action, call, startTestSandbox, type TestSandbox } from "../sandbox/helpers";

let t: TestSandbox;
beforeAll(async () => {
  // The day's creation budget scaled down from 200 to 2; the general budgets as the service's.
  t = await startTestSandbox({ limits: { criticalPerDay: 2 } });
});
afterAll(async () => {
  await t.stop();
});

it("after a creation is throttled for the day, the device's orders can still be read (the gateway answers them)", async () => {
  const app = createGatewayClient({ baseUrl: t.sandbox.baseUrl, deviceKey: t.sandbox.demo.deviceKey, quota: { store: createMemoryQuotaStore() } });
  // Another user of the same device key (the merchant's point of sale, an instance whose quota
  // records were lost): its calls are not in the app's store.
  const other = createGatewayClient({ baseUrl: t.sandbox.baseUrl, deviceKey: t.sandbox.demo.deviceKey, quota: { store: createMemoryQuotaStore() } });

  // A shopper's order, paid and confirmed on the gateway.
  const paid = await app.createOrder({ expected_output_amount: "25.00", input_currency: "BTC", fiat: "EUR", reference: "shop-1001" });
  const identifier = paid._unsafeUnwrap().identifier;
  expect((await action(t.sandbox, identifier, { action: "pay", amount: "exact" })).status).toBe(200);
  expect((await action(t.sandbox, identifier, { action: "confirm" })).status).toBe(200);

  // The other user takes the day's last creation; the app's next creation meets the daily throttle.
  expect((await other.createOrder({ expected_output_amount: "5.00", input_currency: "BTC", fiat: "EUR" })).isOk()).toBe(true);
  const refused = await app.createOrder({ expected_output_amount: "30.00", input_currency: "BTC", fiat: "EUR", reference: "shop-1002" });
  expect(refused.isErr() && refused.error.kind).toBe("throttled");
  // Creations stay held until the Retry-After: the next one is not sent into the throttle.
  const held = await app.createOrder({ expected_output_amount: "31.00", input_currency: "BTC", fiat: "EUR", reference: "shop-1003" });
  expect(held.isErr() && held.error.kind === "quota_exhausted" && held.error.window).toBe("gateway_throttle");

  // The gateway still answers the device's reads...
  const direct = await call(t.sandbox.origin, "GET", `/api/v1/orders/info/${identifier}`, { key: t.sandbox.demo.deviceKey });
  expect(direct.status).toBe(200);
  expect(direct.json[0].status).toBe("CO");

  // ...so the app reads the paid order (a webhook's read) and lists the device's orders (the reconciler).
  const read = await app.orderInfo(identifier);
  expect(read.isOk() ? read.value.status.code : `${read.error.kind}: ${read.error.message}`).toBe("CO");
  const listed = await app.listOrders();
  expect(listed.isOk() ? listed.value.orders.map((o) => o.identifier) : `${listed.error.kind}: ${listed.error.message}`).toContain(identifier);
});
