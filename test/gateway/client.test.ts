import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGatewayClient, type GatewayClientOptions, type GatewayLogger } from "../../app/gateway/client";
import { createMemoryQuotaStore, hashDeviceKey, type QuotaStore } from "../../app/gateway/quota";
import { closedPortOrigin, hang, json, raw, reset, startScriptedServer, type ScriptedServer } from "./support/scripted-server";
import { fixtureJson } from "./support/fixtures";

const DEVICE_KEY = "6c9bb3c5-7d3a-4f1e-9b2a-1f0c8d7e6a5b";
const ORDER_ID = "1040095a-737d-41a2-a2e1-d031d19ec8cd";

const currencies = fixtureJson<{ body: unknown[] }>("currencies.response.docs-b4bit.json").body;
const orderInfo = fixtureJson<{ body: Record<string, unknown>[] }>("orders-info.response.docs-b4bit.json").body;
const ordersList = fixtureJson<{ body: unknown[] }>("orders-list.response.docs-b4bit.json").body;
const created = fixtureJson<{ body: unknown }>("orders-create.response.eth_test3.2023-07.gpylypchuk.json").body;

const orderRequest = { expected_output_amount: "12.10", input_currency: "ETH_TEST3", fiat: "EUR" as const, reference: "shop-order-1001" };

let server: ScriptedServer;

beforeEach(async () => {
  server = await startScriptedServer();
});

afterEach(async () => {
  await server.close();
});

interface LogLine {
  level: string;
  message: string;
  fields?: Record<string, unknown>;
}

/** A client with a fake clock: sleeping advances it, and every wait is recorded. */
function makeClient(overrides: Partial<GatewayClientOptions> = {}) {
  let now = new Date("2026-04-17T10:00:00Z").getTime();
  const sleeps: number[] = [];
  const logs: LogLine[] = [];
  const logger: GatewayLogger = {
    info: (message, fields) => logs.push({ level: "info", message, fields }),
    warn: (message, fields) => logs.push({ level: "warn", message, fields }),
    error: (message, fields) => logs.push({ level: "error", message, fields }),
  };
  const client = createGatewayClient({
    baseUrl: `${server.origin}/api/v1`,
    deviceKey: DEVICE_KEY,
    timeoutMs: 2_000,
    clock: () => new Date(now),
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
    random: () => 0.5,
    logger,
    ...overrides,
  });
  return { client, sleeps, logs, advance: (ms: number) => (now += ms) };
}

describe("requests", () => {
  it("sends the trimmed device key and joins the base URL without doubled slashes", async () => {
    server.script(json(200, currencies));
    const { client } = makeClient({ baseUrl: `${server.origin}/api/v1//`, deviceKey: `  ${DEVICE_KEY}\n` });
    const result = await client.currencies();
    expect(result.isOk()).toBe(true);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.url).toBe("/api/v1/currencies");
    expect(server.requests[0]?.headers["x-device-id"]).toBe(DEVICE_KEY);
  });

  it("parses currencies with their limits", async () => {
    server.script(json(200, currencies));
    const { client } = makeClient();
    const list = (await client.currencies())._unsafeUnwrap();
    expect(list.map((c) => [c.symbol, c.min_amount, c.max_amount])).toEqual([
      ["USDC_POLYGON_NXTB", "1.00", null],
      ["TRX_USDC_6NU3", "10.00", "1200.00"],
    ]);
  });

  it("creates an order with a JSON body whose amount is the exact decimal text", async () => {
    server.script(json(200, created));
    const { client } = makeClient();
    const result = await client.createOrder({ ...orderRequest, merchant_urlok: "https://shop.example/ok" });
    const response = result._unsafeUnwrap();
    expect(response).toMatchObject({ identifier: "9d060d1d-16c9-4e4d-90b4-07ff4e893b36", input_currency: "ETH_TEST3", expected_input_amount: "0.0034022" });
    const request = server.requests[0];
    expect(request?.method).toBe("POST");
    expect(request?.url).toBe("/api/v1/orders/");
    expect(request?.headers["content-type"]).toBe("application/json");
    expect(request?.body).toContain('"expected_output_amount":12.10,');
    expect(JSON.parse(request?.body ?? "")).toEqual({
      expected_output_amount: 12.1,
      input_currency: "ETH_TEST3",
      fiat: "EUR",
      reference: "shop-order-1001",
      merchant_urlok: "https://shop.example/ok",
    });
  });

  it("keeps response amounts exact, digit for digit", async () => {
    const order = { ...orderInfo[0] };
    const text = JSON.stringify([order]).replace('"crypto_amount":0.00245', '"crypto_amount":0.1000000000000000055511');
    server.script(raw(200, text));
    const { client } = makeClient();
    const result = await client.orderInfo(ORDER_ID);
    expect(result._unsafeUnwrap().crypto_amount).toBe("0.1000000000000000055511");
  });

  it("reads one order from the one-element array of GET /orders/info/{identifier}", async () => {
    server.script(json(200, orderInfo));
    const { client } = makeClient();
    const order = (await client.orderInfo(ORDER_ID))._unsafeUnwrap();
    expect(order.identifier).toBe(ORDER_ID);
    expect(order.status).toMatchObject({ known: true, code: "CO" });
    expect(server.requests[0]?.url).toBe(`/api/v1/orders/info/${ORDER_ID}`);
  });

  it("keeps an unknown status flagged as unknown", async () => {
    server.script(json(200, [{ ...orderInfo[0], status: "RF" }]));
    const { client } = makeClient();
    expect((await client.orderInfo(ORDER_ID))._unsafeUnwrap().status).toEqual({ known: false, code: "RF" });
  });

  it("creates a device", async () => {
    server.script(json(200, { name: "till-3", identifier: "abcdef12-3456-7890-abcd-ef1234567890" }));
    const { client } = makeClient();
    const device = (await client.createDevice("till-3"))._unsafeUnwrap();
    expect(device.identifier).toBe("abcdef12-3456-7890-abcd-ef1234567890");
    expect(server.requests[0]?.url).toBe("/api/v1/device/");
    expect(JSON.parse(server.requests[0]?.body ?? "")).toEqual({ name: "till-3" });
  });
});

describe("listOrders elements", () => {
  const recorded = fixtureJson<{ body: Record<string, unknown>[] }>("orders-info.response.eth_test.2022-10.Naza2021.json").body[0]!;
  const unreadableId = "5f2b8c1e-3d4a-4b6c-8e9f-0a1b2c3d4e5f";

  it("reads an order of the gateway's older shape alongside a documented one", async () => {
    server.script(json(200, [orderInfo[0], recorded]));
    const { client, logs } = makeClient();
    const listing = (await client.listOrders())._unsafeUnwrap();
    expect(listing.orders.map((o) => o.identifier)).toEqual([ORDER_ID, recorded.identifier]);
    expect(listing.unreadable).toEqual([]);
    expect(logs.filter((l) => l.level !== "info")).toEqual([]);
  });

  it("sets aside and logs (its identifier, never the device key) an order it cannot read, and returns the others", async () => {
    server.script(json(200, [{ ...orderInfo[0], identifier: unreadableId, reference: "shop-7", fiat_amount: "1.43" }, orderInfo[0]]));
    const { client, logs } = makeClient();
    const listing = (await client.listOrders())._unsafeUnwrap();
    expect(listing.orders.map((o) => o.identifier)).toEqual([ORDER_ID]);
    expect(listing.unreadable).toEqual([{ identifier: unreadableId, reference: "shop-7", path: ["fiat_amount"], reason: expect.any(String) }]);
    const warned = logs.filter((l) => l.level === "warn");
    expect(warned).toEqual([
      { level: "warn", message: "gateway listing: an order could not be read; set aside", fields: { operation: "list_orders", identifier: unreadableId, path: "fiat_amount", reason: expect.any(String) } },
    ]);
    expect(JSON.stringify(logs)).not.toContain(DEVICE_KEY);
    expect(server.requests).toHaveLength(1);
  });
});

describe("listOrders dates", () => {
  it("formats Dates as YYYY/MM/DD in UTC", async () => {
    server.script(json(200, ordersList));
    const { client } = makeClient();
    // 23:30 in New York on Jan 1 is already Jan 2 in UTC; 00:30 in Madrid on Feb 1 is still Jan 31.
    const result = await client.listOrders({ start: new Date("2026-01-01T23:30:00-05:00"), end: new Date("2026-02-01T00:30:00+01:00") });
    expect(result._unsafeUnwrap().orders[0]?.crypto_amount).toBeNull();
    expect(server.requests[0]?.url).toBe("/api/v1/orders/?start=2026/01/02&end=2026/01/31");
  });

  it("passes YYYY/MM/DD strings through and omits what is not given", async () => {
    server.script(json(200, []), json(200, []));
    const { client } = makeClient();
    await client.listOrders({ start: "2026/01/01" });
    await client.listOrders();
    expect(server.requests.map((r) => r.url)).toEqual(["/api/v1/orders/?start=2026/01/01", "/api/v1/orders/"]);
  });

  it.each([
    [{ start: "2026-01-01" }, "start"],
    [{ start: "2026/02/30" }, "start"],
    [{ end: new Date(Number.NaN) }, "end"],
    [{ start: "2026/02/01", end: "2026/01/01" }, "start"],
  ])("refuses %j without calling the service", async (range, field) => {
    const { client } = makeClient();
    const error = (await client.listOrders(range))._unsafeUnwrapErr();
    expect(error.kind).toBe("invalid_request");
    expect(error.kind === "invalid_request" && error.path).toEqual([field]);
    expect(server.requests).toHaveLength(0);
  });
});

describe("errors", () => {
  it("403 is unauthorized and is not retried", async () => {
    server.script(json(403, { detail: "Authentication credentials were not provided." }));
    const { client, sleeps } = makeClient();
    const error = (await client.currencies())._unsafeUnwrapErr();
    expect(error.kind).toBe("unauthorized");
    expect(error.retryable).toBe(false);
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it("401 is the same refusal of the key: unauthorized, not retried, and never a 'rejected' order", async () => {
    server.script(json(401, { detail: "Authentication credentials were not provided." }), json(401, { detail: "Invalid device." }));
    const { client, sleeps } = makeClient();
    const read = (await client.currencies())._unsafeUnwrapErr();
    expect(read.kind === "unauthorized" && [read.status, read.retryable]).toEqual([401, false]);
    const created = (await client.createOrder(orderRequest))._unsafeUnwrapErr();
    expect(created.kind).toBe("unauthorized");
    expect(server.requests).toHaveLength(2);
    expect(sleeps).toEqual([]);
  });

  it("a 401 or 403 that is not the gateway's own (a firewall's page) says nothing of the key: a read is tried again, and a creation's outcome is unknown", async () => {
    server.script(raw(403, "<html><body><h1>403 Forbidden</h1></body></html>", { "Content-Type": "text/html" }), json(200, []));
    const { client } = makeClient();
    expect((await client.currencies()).isOk()).toBe(true);
    expect(server.requests).toHaveLength(2);

    server.script(json(401, { message: "Unauthorized" }));
    const created = (await client.createOrder(orderRequest))._unsafeUnwrapErr();
    expect(created.kind).toBe("outcome_unknown");
    expect(created.kind === "outcome_unknown" && created.cause).toMatchObject({ kind: "server_error", status: 401 });
    expect(server.requests).toHaveLength(3);
  });

  it("a redirect is no answer: a read is tried again, and a creation is reported with its outcome unknown (never resent, never 'rejected')", async () => {
    server.script(raw(301, "", { Location: "https://elsewhere.example/api/v1/currencies" }), json(200, []));
    const { client } = makeClient();
    expect((await client.currencies()).isOk()).toBe(true);
    expect(server.requests).toHaveLength(2);

    server.script(raw(303, "", { Location: "https://elsewhere.example/api/v1/orders/123" }));
    const created = (await client.createOrder(orderRequest))._unsafeUnwrapErr();
    expect(created.kind).toBe("outcome_unknown");
    expect(created.kind === "outcome_unknown" && created.cause).toMatchObject({ kind: "server_error", status: 303 });
    expect(server.requests).toHaveLength(3);
  });

  it("404 on create is rejected with the service's detail, sent once", async () => {
    server.script(json(404, { detail: "Amount is below the minimum for ETH_TEST3" }));
    const { client } = makeClient();
    const error = (await client.createOrder(orderRequest))._unsafeUnwrapErr();
    expect(error.kind).toBe("rejected");
    expect(error.kind === "rejected" && [error.status, error.detail]).toEqual([404, "Amount is below the minimum for ETH_TEST3"]);
    expect(server.requests).toHaveLength(1);
  });

  it("404 on create with DRF's field errors is rejected with them as the detail", async () => {
    server.script(json(404, { merchant_urlok: ["Enter a valid URL."] }));
    const { client } = makeClient();
    const error = (await client.createOrder(orderRequest))._unsafeUnwrapErr();
    expect(error.kind === "rejected" && [error.status, error.detail]).toEqual([404, "merchant_urlok: Enter a valid URL."]);
  });

  // A page of whatever stands in front of the gateway (a proxy's HTML, an API gateway's JSON of
  // its own) is no refusal of the order: the order may or may not exist, and it is not resent.
  it.each([
    ["an HTML page", raw(404, "<h1>Not Found</h1>", { "Content-Type": "text/html" })],
    ["an empty body", raw(404, "")],
    ["an API gateway's own JSON", json(404, { message: "no Route matched with those values" })],
  ])("404 on create with %s is an unknown outcome, sent once", async (_what, reply) => {
    server.script(reply);
    const { client } = makeClient();
    const error = (await client.createOrder(orderRequest))._unsafeUnwrapErr();
    expect(error.kind).toBe("outcome_unknown");
    expect(error.kind === "outcome_unknown" && error.cause).toMatchObject({ kind: "server_error", status: 404 });
    expect(server.requests).toHaveLength(1);
  });

  it("404 on order info is not_found", async () => {
    server.script(json(404, { detail: "Not found." }));
    const { client } = makeClient();
    const error = (await client.orderInfo(ORDER_ID))._unsafeUnwrapErr();
    expect(error.kind).toBe("not_found");
    expect(server.requests).toHaveLength(1);
  });

  it("an identifier that is not a UUID is refused before any call", async () => {
    const { client } = makeClient();
    expect((await client.orderInfo("../currencies"))._unsafeUnwrapErr().kind).toBe("invalid_request");
    expect(server.requests).toHaveLength(0);
  });

  it("an invalid order request is refused before any call, naming the field", async () => {
    const { client } = makeClient();
    const error = (await client.createOrder({ ...orderRequest, city: "x".repeat(29) }))._unsafeUnwrapErr();
    expect(error.kind === "invalid_request" && error.path).toEqual(["city"]);
    expect(server.requests).toHaveLength(0);
  });

  it("a response that breaks the schema is invalid_response with the field path", async () => {
    server.script(json(200, [{ ...orderInfo[0], fiat_amount: "125.02" }]));
    const { client } = makeClient();
    const error = (await client.orderInfo(ORDER_ID))._unsafeUnwrapErr();
    expect(error.kind).toBe("invalid_response");
    expect(error.kind === "invalid_response" && error.path).toEqual([0, "fiat_amount"]);
    expect(server.requests).toHaveLength(1);
  });

  it("a listing that is not a list is invalid_response", async () => {
    server.script(json(200, { results: ordersList }));
    const { client } = makeClient();
    expect((await client.listOrders())._unsafeUnwrapErr().kind).toBe("invalid_response");
  });

  it("a body that is not JSON is invalid_response", async () => {
    server.script(raw(200, "<html>maintenance</html>"));
    const { client } = makeClient();
    expect((await client.currencies())._unsafeUnwrapErr().kind).toBe("invalid_response");
  });

  it("order info with more than one order is invalid_response", async () => {
    server.script(json(200, [orderInfo[0], orderInfo[0]]));
    const { client } = makeClient();
    expect((await client.orderInfo(ORDER_ID))._unsafeUnwrapErr().kind).toBe("invalid_response");
  });

  it("an unlisted 4xx is rejected with its status", async () => {
    server.script(json(400, { detail: "language: too long" }));
    const { client } = makeClient();
    const error = (await client.createOrder(orderRequest))._unsafeUnwrapErr();
    expect(error.kind === "rejected" && error.status).toBe(400);
  });

  it("a DRF field-error body (400) is rejected with its fields and messages on one line", async () => {
    server.script(
      json(400, {
        full_name: ["Null characters are not allowed."],
        city: ["Ensure this field has no more than 28 characters.", "Surrogate characters are not allowed: U+D83D."],
        non_field_errors: ["The fields  are\ninconsistent."],
      }),
    );
    const { client } = makeClient();
    const error = (await client.createOrder(orderRequest))._unsafeUnwrapErr();
    expect(error.kind === "rejected" ? error.detail : error.kind).toBe(
      "full_name: Null characters are not allowed.; " +
        "city: Ensure this field has no more than 28 characters. Surrogate characters are not allowed: U+D83D.; " +
        "The fields are inconsistent.",
    );
  });

  it("keeps only field names and text messages of a field-error body, bounded in length", async () => {
    server.script(
      json(400, { "bad key<>": ["x"], nested: { inner: ["y"] }, count: [3], language: "Not a valid string." }),
      json(400, { notes: ["m".repeat(3_000)], city: ["c"] }),
      json(400, { nested: { inner: ["y"] } }),
      json(400, []),
    );
    const { client } = makeClient();
    const detail = async () => {
      const error = (await client.createOrder(orderRequest))._unsafeUnwrapErr();
      return error.kind === "rejected" ? error.detail : error.kind;
    };
    expect(await detail()).toBe("language: Not a valid string.");
    const long = await detail();
    expect(long?.startsWith("notes: mmm")).toBe(true);
    expect(long?.endsWith("…")).toBe(true);
    expect([...(long ?? "")]).toHaveLength(500);
    expect(await detail()).toBeNull();
    expect(await detail()).toBeNull();
  });
});

// makeClient's midpoint draw (0.5) leaves a backoff as it is and adds 10 % to a 429's wait
// (its jitter only adds: Retry-After is a minimum).
describe("retries", () => {
  it("429 waits Retry-After seconds, then succeeds", async () => {
    server.script(json(429, { detail: "throttled" }, { "Retry-After": "3" }), json(200, currencies));
    const { client, sleeps } = makeClient();
    expect((await client.currencies()).isOk()).toBe(true);
    expect(sleeps).toEqual([3_300]);
    expect(server.requests).toHaveLength(2);
  });

  it("consecutive 429s double the wait", async () => {
    const throttled = () => json(429, {}, { "Retry-After": "2" });
    server.script(throttled(), throttled(), throttled(), json(200, ordersList));
    const { client, sleeps } = makeClient();
    expect((await client.listOrders()).isOk()).toBe(true);
    expect(sleeps).toEqual([2_200, 4_400, 8_800]);
  });

  it("a Retry-After of 0, or a date already past, is no wait at all: the default wait, doubled on each 429, applies", async () => {
    const past = new Date("2026-04-17T09:00:00Z").toUTCString();
    server.script(json(429, {}, { "Retry-After": "0" }), json(429, {}, { "Retry-After": past }), json(200, currencies));
    const { client, sleeps } = makeClient();
    expect((await client.currencies()).isOk()).toBe(true);
    expect(sleeps).toEqual([1_100, 2_200]);
  });

  it("a Retry-After beyond the gateway's longest window (a day) holds the device's calls for a day, no longer", async () => {
    server.script(json(429, {}, { "Retry-After": "31536000" }));
    const { client, advance } = makeClient();
    const error = (await client.currencies())._unsafeUnwrapErr();
    expect(error.kind === "throttled" && error.retryAfterSeconds).toBe(86_400);
    // Held: nothing is sent meanwhile, an order neither.
    expect((await client.listOrders())._unsafeUnwrapErr().kind).toBe("quota_exhausted");
    expect(server.requests).toHaveLength(1);
    // A day later the device's calls go again.
    advance(86_400_000 + 1_000);
    server.script(json(200, currencies));
    expect((await client.currencies()).isOk()).toBe(true);
    expect(server.requests).toHaveLength(2);
  });

  it("the 429 wait is jittered by the injected randomness, upward only: Retry-After is a minimum", async () => {
    server.script(json(429, {}, { "Retry-After": "10" }), json(200, currencies));
    const { client, sleeps } = makeClient({ random: () => 0 });
    expect((await client.currencies()).isOk()).toBe(true);
    expect(sleeps).toEqual([10_000]);
    server.script(json(429, {}, { "Retry-After": "10" }), json(200, currencies));
    const most = makeClient({ random: () => 0.999_999 });
    expect((await most.client.currencies()).isOk()).toBe(true);
    expect(most.sleeps).toEqual([12_000]);
  });

  it("500 then success on a GET", async () => {
    server.script(json(500, {}), json(502, {}), json(200, orderInfo));
    const { client, sleeps } = makeClient();
    expect((await client.orderInfo(ORDER_ID)).isOk()).toBe(true);
    expect(sleeps).toEqual([500, 1_000]);
    expect(server.requests).toHaveLength(3);
  });

  it("a GET that times out is retried", async () => {
    server.script(hang(), json(200, currencies));
    const { client, sleeps } = makeClient({ timeoutMs: 200 });
    expect((await client.currencies()).isOk()).toBe(true);
    expect(sleeps).toEqual([500]);
  });

  it("a call's own budget replaces the client's for that call only: its attempts, its timeout, its wait for quota", async () => {
    server.script(hang(), json(500, {}), json(200, orderInfo));
    const { client, sleeps } = makeClient({ timeoutMs: 5_000, quota: { store: createMemoryQuotaStore({ generalPerMinute: 2 }), maxWaitMs: 60_000 } });
    const budget = { timeoutMs: 200, retry: { maxAttempts: 1 }, quotaMaxWaitMs: 0 };
    // One attempt, timed out on the budget's limit, not retried.
    const timedOut = (await client.orderInfo(ORDER_ID, budget))._unsafeUnwrapErr();
    expect(timedOut.kind === "timeout" && timedOut.timeoutMs).toBe(200);
    // One attempt again: the 500 is not retried.
    expect((await client.orderInfo(ORDER_ID, budget))._unsafeUnwrapErr().kind).toBe("server_error");
    expect(sleeps).toEqual([]);
    // The minute is full: no wait for a slot.
    expect((await client.orderInfo(ORDER_ID, budget))._unsafeUnwrapErr().kind).toBe("quota_exhausted");
    expect(server.requests).toHaveLength(2);
    // Without one, the client's own budget: it waits for the slot.
    expect((await client.orderInfo(ORDER_ID)).isOk()).toBe(true);
    expect(sleeps).toHaveLength(1);
  });

  it("stops at the attempt cap with the last error", async () => {
    server.script(json(500, {}), json(500, {}), json(503, {}), json(200, currencies));
    const { client, sleeps } = makeClient({ retry: { maxAttempts: 3 } });
    const error = (await client.currencies())._unsafeUnwrapErr();
    expect(error.kind === "server_error" && error.status).toBe(503);
    expect(server.requests).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
  });

  it("stops when the next wait would pass the total-time cap", async () => {
    const throttled = () => json(429, {}, { "Retry-After": "10" });
    server.script(throttled(), throttled(), json(200, currencies));
    const { client, sleeps } = makeClient({ retry: { maxTotalMs: 25_000 } });
    const error = (await client.currencies())._unsafeUnwrapErr();
    expect(error.kind === "throttled" && error.retryAfterSeconds).toBe(10);
    expect(sleeps).toEqual([11_000]);
    expect(server.requests).toHaveLength(2);
  });

  it("a refused connection is a network error, retried up to the cap", async () => {
    const { client, sleeps } = makeClient({ baseUrl: `${await closedPortOrigin()}/api/v1`, retry: { maxAttempts: 3 } });
    const error = (await client.currencies())._unsafeUnwrapErr();
    expect(error.kind).toBe("network");
    expect(error.kind === "network" && [error.code, error.beforeSend]).toEqual(["ECONNREFUSED", true]);
    expect(sleeps).toEqual([500, 1_000]);
  });
});

describe("POST /orders/ is never resent when it may have created an order", () => {
  it("500 → outcome_unknown, with exactly one request received", async () => {
    server.script(json(500, {}), json(200, created));
    const { client, sleeps, logs } = makeClient();
    const error = (await client.createOrder(orderRequest))._unsafeUnwrapErr();
    expect(error.kind).toBe("outcome_unknown");
    expect(error.kind === "outcome_unknown" && [error.reference, error.cause]).toMatchObject(["shop-order-1001", { kind: "server_error" }]);
    expect(error.retryable).toBe(false);
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
    expect(logs.some((l) => l.level === "error")).toBe(true);
  });

  it("a timeout after sending → outcome_unknown, one request", async () => {
    server.script(hang(), json(200, created));
    const { client } = makeClient({ timeoutMs: 200 });
    const error = (await client.createOrder(orderRequest))._unsafeUnwrapErr();
    expect(error.kind === "outcome_unknown" && error.cause).toMatchObject({ kind: "timeout" });
    expect(server.requests).toHaveLength(1);
  });

  it("a connection reset after sending → outcome_unknown, one request", async () => {
    server.script(reset(), json(200, created));
    const { client } = makeClient();
    const error = (await client.createOrder(orderRequest))._unsafeUnwrapErr();
    expect(error.kind === "outcome_unknown" && error.cause).toMatchObject({ kind: "network", beforeSend: false });
    expect(server.requests).toHaveLength(1);
  });

  it("a 200 whose body cannot be read → outcome_unknown (the order probably exists)", async () => {
    server.script(json(200, { identifier: "nope" }));
    const { client } = makeClient();
    const error = (await client.createOrder(orderRequest))._unsafeUnwrapErr();
    expect(error.kind === "outcome_unknown" && error.cause).toMatchObject({ kind: "invalid_response" });
  });

  it("429 guarantees nothing was created, so it is resent", async () => {
    server.script(json(429, {}, { "Retry-After": "1" }), json(200, created));
    const { client, sleeps } = makeClient();
    expect((await client.createOrder(orderRequest)).isOk()).toBe(true);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]?.body).toBe(server.requests[0]?.body);
    expect(sleeps).toEqual([1_100]);
  });

  it("a prepared order is resent after a 429 only when the caller still allows it", async () => {
    server.script(json(429, {}, { "Retry-After": "1" }), json(429, {}, { "Retry-After": "1" }), json(200, created));
    const { client, sleeps } = makeClient();
    let asked = 0;
    const allowedOnce = await (await client.prepareOrder(orderRequest))._unsafeUnwrap().send({ mayResend: async () => ++asked === 1 });
    // Resent once after the first 429; after the second, the caller declines: nothing more is sent.
    expect(allowedOnce._unsafeUnwrapErr().kind).toBe("throttled");
    expect(server.requests).toHaveLength(2);
    expect(asked).toBe(2);
    expect(sleeps).toEqual([1_100, 2_200]);
  });

  it("a refused connection is resent, and ends as a plain network error", async () => {
    const { client, sleeps } = makeClient({ baseUrl: `${await closedPortOrigin()}/api/v1`, retry: { maxAttempts: 2 } });
    const error = (await client.createOrder(orderRequest))._unsafeUnwrapErr();
    expect(error.kind === "network" && error.beforeSend).toBe(true);
    expect(sleeps).toEqual([500]);
  });

  it("POST /device/ follows the same rule", async () => {
    server.script(json(503, {}), json(200, { name: "x", identifier: DEVICE_KEY }));
    const { client } = makeClient();
    const error = (await client.createDevice("till-4"))._unsafeUnwrapErr();
    expect(error.kind === "outcome_unknown" && error.operation).toBe("create_device");
    expect(server.requests).toHaveLength(1);
  });
});

describe("client-side quota", () => {
  it("a used-up day fails fast with quota_exhausted, without calling the service", async () => {
    server.script(json(200, currencies), json(200, currencies), json(200, currencies));
    const { client, sleeps } = makeClient({ quota: { store: createMemoryQuotaStore({ generalPerDay: 2 }) } });
    expect((await client.currencies()).isOk()).toBe(true);
    expect((await client.currencies()).isOk()).toBe(true);
    const error = (await client.currencies())._unsafeUnwrapErr();
    expect(error.kind).toBe("quota_exhausted");
    expect(error.kind === "quota_exhausted" && [error.window, error.retryAt.toISOString()]).toEqual(["general_day", "2026-04-18T10:00:00.000Z"]);
    expect(server.requests).toHaveLength(2);
    expect(sleeps).toEqual([]);
  });

  it("the critical day budget stops order creation but not reads", async () => {
    server.script(json(200, created), json(200, currencies));
    const { client } = makeClient({ quota: { store: createMemoryQuotaStore({ criticalPerDay: 1 }) } });
    expect((await client.createOrder(orderRequest)).isOk()).toBe(true);
    expect((await client.createOrder(orderRequest))._unsafeUnwrapErr().kind).toBe("quota_exhausted");
    expect((await client.currencies()).isOk()).toBe(true);
    expect(server.requests.map((r) => r.method)).toEqual(["POST", "GET"]);
  });

  it("a full minute makes the call wait for the next free slot", async () => {
    server.script(json(200, currencies), json(200, currencies), json(200, currencies));
    const { client, sleeps, advance } = makeClient({ quota: { store: createMemoryQuotaStore({ generalPerMinute: 2 }), maxWaitMs: 60_000 } });
    await client.currencies();
    advance(15_000);
    await client.currencies();
    expect((await client.currencies()).isOk()).toBe(true);
    expect(sleeps).toEqual([45_000]);
    expect(server.requests).toHaveLength(3);
  });

  it("a minute wait longer than the limit fails with quota_exhausted", async () => {
    server.script(json(200, currencies));
    const { client, sleeps } = makeClient({ quota: { store: createMemoryQuotaStore({ generalPerMinute: 1 }), maxWaitMs: 5_000 } });
    await client.currencies();
    const error = (await client.currencies())._unsafeUnwrapErr();
    expect(error.kind === "quota_exhausted" && error.window).toBe("general_minute");
    expect(sleeps).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it("retries count against the quota like any call", async () => {
    server.script(json(500, {}), json(200, currencies));
    const { client } = makeClient();
    await client.currencies();
    expect(await client.quotaRemaining()).toEqual({ general: { minute: 58, day: 1998 }, critical: { minute: 15, day: 200 } });
  });

  it("shows the budget left, critical calls counting against both", async () => {
    server.script(json(200, created), json(200, currencies));
    const { client } = makeClient();
    await client.createOrder(orderRequest);
    await client.currencies();
    expect(await client.quotaRemaining()).toEqual({ general: { minute: 58, day: 1998 }, critical: { minute: 14, day: 199 } });
  });

  it("a prepared order holds its slot and sends nothing until send(), then sends on that slot", async () => {
    server.script(json(200, created));
    const { client } = makeClient();
    const prepared = (await client.prepareOrder(orderRequest))._unsafeUnwrap();
    expect(server.requests).toHaveLength(0);
    expect((await client.quotaRemaining()).critical).toEqual({ minute: 14, day: 199 });
    expect((await prepared.send()).isOk()).toBe(true);
    expect(server.requests.map((r) => [r.method, r.url])).toEqual([["POST", "/api/v1/orders/"]]);
    expect((await client.quotaRemaining()).critical).toEqual({ minute: 14, day: 199 });
    expect(() => prepared.send()).toThrow(/once/);
    expect(server.requests).toHaveLength(1);
  });

  it("preparing refuses an invalid order or a used-up budget without a slot or a request", async () => {
    const { client } = makeClient({ quota: { store: createMemoryQuotaStore({ criticalPerDay: 1 }) } });
    const invalid = await client.prepareOrder({ ...orderRequest, expected_output_amount: "-1" });
    expect(invalid._unsafeUnwrapErr().kind).toBe("invalid_request");
    expect((await client.quotaRemaining()).critical.day).toBe(1);
    (await client.prepareOrder(orderRequest))._unsafeUnwrap();
    expect((await client.prepareOrder(orderRequest))._unsafeUnwrapErr().kind).toBe("quota_exhausted");
    expect(server.requests).toHaveLength(0);
  });

  it("a prepared order retried after a 429 takes a slot for the retry", async () => {
    server.script(json(429, { detail: "slow down" }, { "retry-after": "1" }), json(200, created));
    const { client } = makeClient();
    const prepared = (await client.prepareOrder(orderRequest))._unsafeUnwrap();
    expect((await prepared.send()).isOk()).toBe(true);
    expect(server.requests).toHaveLength(2);
    expect((await client.quotaRemaining()).critical).toEqual({ minute: 13, day: 198 });
  });

  it("the store is keyed by a hash, never by the device key", async () => {
    const inner = createMemoryQuotaStore();
    const seen: string[] = [];
    const recording: QuotaStore = {
      take: (key, cls, now) => {
        seen.push(key);
        return inner.take(key, cls, now);
      },
      remaining: (key, now) => {
        seen.push(key);
        return inner.remaining(key, now);
      },
      holdUntil: (key, until) => {
        seen.push(key);
        inner.holdUntil(key, until);
      },
    };
    server.script(json(200, currencies), json(429, { detail: "Request was throttled. Expected available in 1 second." }, { "Retry-After": "1" }), json(200, currencies));
    const { client } = makeClient({ quota: { store: recording } });
    await client.currencies();
    await client.quotaRemaining();
    await client.currencies();
    expect(new Set(seen)).toEqual(new Set([hashDeviceKey(DEVICE_KEY)]));
    expect(seen.length).toBeGreaterThanOrEqual(5);
  });
});

describe("secrets", () => {
  it("the device key appears in no log line and no error message", async () => {
    server.script(json(403, {}), json(500, {}), json(429, {}, { "Retry-After": "1" }), json(500, {}));
    const { client, logs } = makeClient({ retry: { maxAttempts: 2 } });
    const errors = [await client.currencies(), await client.createOrder(orderRequest), await client.listOrders()].map((r) => r._unsafeUnwrapErr());
    expect(logs.length).toBeGreaterThan(0);
    const text = JSON.stringify(logs) + errors.map((e) => `${e.message} ${String(e.cause)}`).join(" ");
    expect(text).not.toContain(DEVICE_KEY);
  });

  it("a bad configuration throws without echoing the key", () => {
    expect(() => createGatewayClient({ baseUrl: "not a url", deviceKey: DEVICE_KEY })).toThrow(/baseUrl/);
    expect(() => createGatewayClient({ baseUrl: server.origin, deviceKey: "has space" })).toThrow(/deviceKey/);
    let thrown: unknown = null;
    try {
      createGatewayClient({ baseUrl: server.origin, deviceKey: "secret with space" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Error);
    expect(String(thrown)).not.toContain("secret with space");
  });
});
