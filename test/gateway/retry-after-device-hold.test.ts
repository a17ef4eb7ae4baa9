// A 429's Retry-After holds every call on the device, not only the retries of the one call that
// met it: the next look-up of the same reconciler pass, the inbox's read, a shopper's return,
// another shop on a shared device are not sent into the gateway's throttle before it ends (each
// would meet a 429 of its own and keep the throttle full: a 429 storm paced by the app).
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, expect, it } from "vitest";
import { createGatewayClient } from "../../app/gateway/client";
import { createMemoryQuotaStore } from "../../app/gateway/quota";
import { json, startScriptedServer, type ScriptedServer } from "../gateway/support/scripted-server";

const DEVICE_KEY = "6c9bb3c5-7d3a-4f1e-9b2a-1f0c8d7e6a5b";
const ORDER_ID = "1040095a-737d-41a2-a2e1-d031d19ec8cd";

let server: ScriptedServer;
beforeEach(async () => {
  server = await startScriptedServer();
});
afterEach(async () => {
  await server.close();
});


/**
 * Clients of one device sharing one quota store, as the app's are (one store per process, one
 * row set per device), on a clock that the clients' waits move on; each call sent is noted
 * with the clock's time.
 */
function oneDevice(startMs: number) {
  let now = startMs;
  const store = createMemoryQuotaStore();
  const sentAt: number[] = [];
  const clientFor = (retry: { maxAttempts?: number } = {}) =>
    createGatewayClient({
      baseUrl: `${server.origin}/api/v1`,
      deviceKey: DEVICE_KEY,
      quota: { store },
      clock: () => new Date(now),
      sleep: async (ms) => {
        now += ms;
      },
      random: () => 0.5,
      retry,
      fetch: (input, init) => {
        sentAt.push(now - startMs);
        return fetch(input, init);
      },
    });
  return { clientFor, sentAt, advance: (ms: number) => void (now += ms) };
}

it("after the gateway answered 429 with Retry-After: 120, no call on that device is sent before the 120 s are up", async () => {
  // One device's budget, shared as the app shares it.
  const { clientFor, advance } = oneDevice(new Date("2026-04-17T10:00:00Z").getTime());
  const reconciler = clientFor();
  const inbox = clientFor();

  // The gateway's throttle is full (another client of the key, an instance whose records were
  // lost): it asks for two minutes. The listing gives up at once (the wait exceeds its budget).
  server.script(json(429, { detail: "Request was throttled. Expected available in 120 seconds." }, { "Retry-After": "120" }));
  const listed = await reconciler.listOrders();
  expect(listed.isErr() && listed.error.kind).toBe("throttled");
  expect(server.requests).toHaveLength(1);

  // Five seconds later a webhook's read, and the reconciler's next look-up, on the same device.
  advance(5_000);
  server.script(
    json(429, { detail: "Request was throttled. Expected available in 115 seconds." }, { "Retry-After": "115" }),
    json(429, { detail: "Request was throttled. Expected available in 115 seconds." }, { "Retry-After": "115" }),
  );
  const read = await inbox.orderInfo(ORDER_ID);
  const lookUp = await reconciler.orderInfo(ORDER_ID);
  expect(read.isErr()).toBe(true);
  expect(lookUp.isErr()).toBe(true);
  // The gateway said when it would take calls again: nothing should have been sent meanwhile.
  expect(
    server.requests.map((r) => r.url),
    "calls sent into the gateway's throttle before its Retry-After ran out",
  ).toEqual(["/api/v1/orders/"]);
});

it("a 429 without a Retry-After holds the device's calls of its kind for the wait its own retry takes (1 s by default)", async () => {
  const { clientFor, sentAt } = oneDevice(new Date("2026-04-17T10:00:00Z").getTime());
  // A proxy in front of the gateway throttles without saying for how long; the reconciler's
  // listing does not retry.
  server.script(json(429, { detail: "Request was throttled." }));
  const listed = await clientFor({ maxAttempts: 1 }).listOrders();
  expect(listed.isErr() && listed.error.kind).toBe("throttled");

  // At the same instant a webhook's read of the same kind of call, on the same device.
  server.script(json(200, JSON.parse(readFileSync(new URL("../fixtures/gateway/orders-info.response.docs-b4bit.json", import.meta.url), "utf8"))));
  await clientFor().orderInfo(ORDER_ID);
  expect(sentAt, "milliseconds after the 429 at which each call was sent").toEqual([0, expect.any(Number)]);
  expect(sentAt[1]).toBeGreaterThanOrEqual(1_000);
});
