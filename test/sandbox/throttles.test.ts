// The four throttles of the specification, per device key and cumulative, with
// small configured limits: 429, a detail, and Retry-After in whole seconds
// counted on the sandbox's clock.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { client, newMerchant, startTestSandbox, type TestSandbox } from "./helpers.js";

let t: TestSandbox;
let api: ReturnType<typeof client>;
const LIMITS = { perMinute: 6, perDay: 10, criticalPerMinute: 2, criticalPerDay: 3 };
const ORDER = { expected_output_amount: 5, input_currency: "BTC", fiat: "EUR" };

beforeAll(async () => {
  t = await startTestSandbox({ limits: LIMITS });
  api = client(t.sandbox);
});
afterAll(async () => {
  await t.stop();
});

async function get(key: string) {
  return api.api("GET", "/currencies", { key });
}

describe("throttles", () => {
  it("general: 60/min scaled down to 6; the 7th call in the minute is 429 with Retry-After", async () => {
    const { key } = await newMerchant(t.sandbox);
    for (let i = 0; i < LIMITS.perMinute; i++) expect((await get(key)).status).toBe(200);
    t.clock.advance(20_000);
    const r = await get(key);
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toBe("40");
    expect(r.json.detail).toBe("Request was throttled. Expected available in 40 seconds.");
    t.clock.advance(39_000);
    expect((await get(key)).status).toBe(429);
    t.clock.advance(1_000);
    expect((await get(key)).status).toBe(200);
  });

  it("general per day: 2,000/day scaled down to 10, counted across minutes", async () => {
    const { key } = await newMerchant(t.sandbox);
    for (let i = 0; i < LIMITS.perDay; i++) {
      expect((await get(key)).status).toBe(200);
      t.clock.advance(61_000);
    }
    const r = await get(key);
    expect(r.status).toBe(429);
    const retry = Number(r.headers.get("retry-after"));
    expect(retry).toBe(86_400 - 10 * 61);
    t.clock.advance(retry * 1000);
    expect((await get(key)).status).toBe(200);
  });

  it("critical per minute (15/min scaled to 2) on POST /orders/ while other endpoints still work", async () => {
    const { key } = await newMerchant(t.sandbox);
    expect((await api.api("POST", "/orders/", { key, json: ORDER })).status).toBe(200);
    expect((await api.api("POST", "/orders/", { key, json: ORDER })).status).toBe(200);
    const r = await api.api("POST", "/orders/", { key, json: ORDER });
    expect(r.status).toBe(429);
    expect(Number(r.headers.get("retry-after"))).toBe(60);
    expect((await get(key)).status).toBe(200);
    t.clock.advance(60_000);
    // As in Django REST Framework, the refused call still counted in the throttles that let it
    // through: the day's critical budget (3) is now spent, so the wait is counted in hours.
    const later = await api.api("POST", "/orders/", { key, json: ORDER });
    expect(later.status).toBe(429);
    expect(Number(later.headers.get("retry-after"))).toBe(86_400 - 60);
  });

  it("POST /device/ shares the critical budget with POST /orders/", async () => {
    const { key } = await newMerchant(t.sandbox);
    expect((await api.api("POST", "/device/", { key, json: { name: "a" } })).status).toBe(200);
    expect((await api.api("POST", "/orders/", { key, json: ORDER })).status).toBe(200);
    const r = await api.api("POST", "/device/", { key, json: { name: "b" } });
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  it("critical per day (200/day scaled to 3)", async () => {
    const { key } = await newMerchant(t.sandbox);
    for (let i = 0; i < LIMITS.criticalPerDay; i++) {
      expect((await api.api("POST", "/orders/", { key, json: ORDER })).status).toBe(200);
      t.clock.advance(120_000);
    }
    const r = await api.api("POST", "/orders/", { key, json: ORDER });
    expect(r.status).toBe(429);
    expect(Number(r.headers.get("retry-after"))).toBe(86_400 - 3 * 120);
    expect((await get(key)).status).toBe(200);
  });

  it("is cumulative: critical calls also spend the general per-minute budget", async () => {
    const { key } = await newMerchant(t.sandbox);
    await api.api("POST", "/orders/", { key, json: ORDER });
    await api.api("POST", "/orders/", { key, json: ORDER });
    for (let i = 0; i < LIMITS.perMinute - 2; i++) expect((await get(key)).status).toBe(200);
    expect((await get(key)).status).toBe(429);
  });

  it("is per device key: another device of the same merchant has its own budget", async () => {
    const { key } = await newMerchant(t.sandbox);
    const other = (await api.api("POST", "/device/", { key, json: { name: "other" } })).json.identifier as string;
    for (let i = 0; i < LIMITS.perMinute - 1; i++) await get(key);
    expect((await get(key)).status).toBe(429);
    expect((await get(other)).status).toBe(200);
  });

  it("writes a wait of exactly one second in the singular, as DRF's Throttled does", async () => {
    const { key } = await newMerchant(t.sandbox);
    for (let i = 0; i < LIMITS.perMinute; i++) expect((await get(key)).status).toBe(200);
    t.clock.advance(59_500);
    const r = await get(key);
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toBe("1");
    expect(r.json.detail).toBe("Request was throttled. Expected available in 1 second.");
  });

  it("writes the injected http_429 fault's one-second wait in the singular too", async () => {
    await api.control("POST", "/faults", { endpoint: "currencies", kind: "http_429", count: 1 });
    const { key } = await newMerchant(t.sandbox);
    const r = await get(key);
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toBe("1");
    expect(r.json.detail).toBe("Request was throttled. Expected available in 1 second.");
  });

  it("checks the throttles before the method: a throttled device gets 429 for a wrong method and OPTIONS", async () => {
    const { key } = await newMerchant(t.sandbox);
    for (let i = 0; i < LIMITS.perMinute; i++) expect((await get(key)).status).toBe(200);
    for (const method of ["DELETE", "OPTIONS"]) {
      const r = await api.api(method, "/currencies", { key });
      expect(r.status).toBe(429);
      expect(r.headers.get("retry-after")).toBe("60");
    }
  });

  it("counts a wrong-method call (405) in the general throttles, not in the critical ones", async () => {
    const { key } = await newMerchant(t.sandbox);
    for (let i = 0; i < LIMITS.perMinute - 1; i++) expect((await api.api("DELETE", "/orders/", { key })).status).toBe(405);
    // The critical budget (2/min) is untouched by the refused calls ...
    expect((await api.api("POST", "/orders/", { key, json: ORDER })).status).toBe(200);
    // ... which, with that create, spent the general 6/min.
    expect((await get(key)).status).toBe(429);
  });

  it("applies to every endpoint, GET /orders/ and /orders/info included", async () => {
    const { key } = await newMerchant(t.sandbox);
    for (let i = 0; i < LIMITS.perMinute; i++) await api.api("GET", "/orders/", { key });
    expect((await api.api("GET", "/orders/", { key })).status).toBe(429);
    expect((await api.api("GET", "/orders/info/0b7c2b8e-5f0e-4a4c-9d1e-6f3a2b1c0d9e", { key })).status).toBe(429);
  });
});
