// The sandbox-only endpoints other engineers code against: merchant sign-up,
// device settings, the clock, injected gateway faults and the dashboard.
import { beforeAll, describe, expect, it } from "vitest";
import { call, client, createOrder, newMerchant, UUID_V4, sandboxForThisFile } from "./helpers.js";

const t = sandboxForThisFile();
let api: ReturnType<typeof client>;

beforeAll(async () => {
  api = client(t.sandbox);
});

describe("merchants and device settings", () => {
  it("signs up a merchant with its first device and a fresh Secret Key", async () => {
    const r = await api.control("POST", "/merchants", { name: "Tienda" });
    expect(r.status).toBe(200);
    expect(r.json.merchant_id).toMatch(/^m_/);
    expect(r.json.device).toMatchObject({ notification_url: null });
    expect(r.json.device.identifier).toMatch(UUID_V4);
    expect(r.json.device.secret_key).toMatch(/^[0-9a-f]{64}$/);
    const other = await api.control("POST", "/merchants", { name: "Tienda" });
    expect(other.json.device.secret_key).not.toBe(r.json.device.secret_key);
    expect((await api.control("POST", "/merchants", { name: "" })).status).toBe(400);
  });

  it("updates the notification URL, sets or regenerates the Secret Key, and validates them", async () => {
    const m = await newMerchant(t.sandbox);
    const set = await api.control("POST", `/devices/${m.key}/settings`, { notification_url: "https://hooks.example/x", secret_key: "AB".repeat(32) });
    expect(set.json).toMatchObject({ notification_url: "https://hooks.example/x", secret_key: "ab".repeat(32), identifier: m.key, enabled: true });
    const regen = await api.control("POST", `/devices/${m.key}/settings`, { regenerate_secret: true });
    expect(regen.json.secret_key).not.toBe("ab".repeat(32));
    expect(regen.json.notification_url).toBe("https://hooks.example/x");
    for (const bad of [{ notification_url: "ftp://x" }, { secret_key: "xyz" }, { secret_key: "ab" }, { enabled: "yes" }]) {
      expect((await api.control("POST", `/devices/${m.key}/settings`, bad)).status).toBe(400);
    }
    expect((await api.control("POST", "/devices/nope/settings", {})).status).toBe(404);
  });
});

describe("bad bodies", () => {
  // Every control call that reads a body, with a device and an order to act on.
  async function bodyCalls(): Promise<string[]> {
    const m = await newMerchant(t.sandbox);
    const o = await createOrder(t.sandbox, { expected_output_amount: 10, input_currency: "SOL", fiat: "EUR" }, m.key);
    return ["/merchants", `/devices/${m.key}/settings`, `/devices/${m.key}/webhook-faults`, `/orders/${o.identifier}/actions`, "/clock", "/faults"];
  }

  it("answers a JSON value that is not an object with 400 and a detail, on every control call", async () => {
    const paths = await bodyCalls();
    for (const path of paths) {
      for (const body of ["[]", "null", '"x"', "5", "true"]) {
        const r = await call(t.sandbox.origin, "POST", `/sandbox${path}`, { body, headers: { "Content-Type": "application/json" } });
        expect([path, body, r.status, typeof r.json?.detail]).toEqual([path, body, 400, "string"]);
        expect(r.json).toEqual({ detail: r.json.detail });
      }
    }
  });

  it("answers unreadable JSON with 400 and another content type with 415, each with a detail", async () => {
    for (const path of await bodyCalls()) {
      const broken = await call(t.sandbox.origin, "POST", `/sandbox${path}`, { body: "{nope", headers: { "Content-Type": "application/json" } });
      expect([path, broken.status, Object.keys(broken.json ?? {})]).toEqual([path, 400, ["detail"]]);
      const text = await call(t.sandbox.origin, "POST", `/sandbox${path}`, { body: "name=x", headers: { "Content-Type": "text/plain" } });
      expect([path, text.status, Object.keys(text.json ?? {})]).toEqual([path, 415, ["detail"]]);
    }
  });

  it("reads urlencoded and multipart forms as string fields", async () => {
    const form = await call(t.sandbox.origin, "POST", "/sandbox/merchants", { body: new URLSearchParams({ name: "Form shop" }) });
    expect(form.status).toBe(200);
    expect(form.json.device.identifier).toMatch(UUID_V4);
    const multipart = new FormData();
    multipart.set("name", "Multipart shop");
    expect((await call(t.sandbox.origin, "POST", "/sandbox/merchants", { body: multipart })).status).toBe(200);
    const clock = await call(t.sandbox.origin, "POST", "/sandbox/clock", { body: new URLSearchParams({ advance_seconds: "5" }) });
    expect(clock.status).toBe(400);
    expect(typeof clock.json.detail).toBe("string");
  });
});

describe("clock", () => {
  it("advances the sandbox's time and reports it", async () => {
    const before = (await api.control("GET", "/clock")).json;
    const after = (await api.control("POST", "/clock", { advance_seconds: 90 })).json;
    expect(Date.parse(after.now) - Date.parse(before.now)).toBe(90_000);
    expect(after.offset_seconds - before.offset_seconds).toBe(90);
    expect((await api.control("POST", "/clock", { advance_seconds: -5 })).status).toBe(400);
  });

  it("applies due expiries as soon as the clock moves", async () => {
    const o = await createOrder(t.sandbox, { expected_output_amount: 10, input_currency: "SOL", fiat: "EUR" });
    await api.control("POST", "/clock", { advance_seconds: 15 * 60 });
    const page = await api.raw("GET", "/sandbox/dashboard");
    expect(page.text).toMatch(new RegExp(`${o.identifier}</code></td><td>EX`));
  });
});

describe("gateway faults", () => {
  it("http_500 answers the next N calls with the service's HTML error page, then recovers", async () => {
    expect((await api.control("POST", "/faults", { endpoint: "currencies", kind: "http_500", count: 2 })).json.faults).toHaveLength(1);
    for (let i = 0; i < 2; i++) {
      const r = await api.api("GET", "/currencies");
      expect(r.status).toBe(500);
      expect(r.headers.get("content-type")).toMatch(/text\/html/);
    }
    expect((await api.api("GET", "/currencies")).status).toBe(200);
  });

  it("http_429 carries Retry-After", async () => {
    await api.control("POST", "/faults", { endpoint: "orders.list", kind: "http_429", count: 1 });
    const r = await api.api("GET", "/orders/");
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toBe("1");
  });

  it("reset drops the connection and timeout never answers", async () => {
    await api.control("POST", "/faults", { endpoint: "orders.info", kind: "reset", count: 1 });
    await expect(api.api("GET", "/orders/info/0b7c2b8e-5f0e-4a4c-9d1e-6f3a2b1c0d9e")).rejects.toThrow();
    await api.control("POST", "/faults", { endpoint: "currencies", kind: "timeout", count: 1 });
    const aborted = fetch(`${t.sandbox.baseUrl}/currencies`, {
      headers: { "X-Device-Id": t.sandbox.demo.deviceKey },
      signal: AbortSignal.timeout(300),
    });
    await expect(aborted).rejects.toThrow(/abort|timeout/i);
    expect((await api.api("GET", "/currencies")).status).toBe(200);
  });

  it("after_create: the order is created, then the answer is a 500", async () => {
    const m = await newMerchant(t.sandbox);
    await api.control("POST", "/faults", { endpoint: "orders.create", kind: "http_500", count: 1, after_create: true });
    const r = await api.api("POST", "/orders/", { key: m.key, json: { expected_output_amount: 5, input_currency: "BTC", fiat: "EUR", reference: "LOST" } });
    expect(r.status).toBe(500);
    const list = (await api.api("GET", "/orders/", { key: m.key })).json;
    expect(list).toHaveLength(1);
    expect(list[0].reference).toBe("LOST");
  });

  it("without after_create nothing is created; DELETE clears the armed faults", async () => {
    const m = await newMerchant(t.sandbox);
    await api.control("POST", "/faults", { endpoint: "orders.create", kind: "http_500", count: 1 });
    expect((await api.api("POST", "/orders/", { key: m.key, json: { expected_output_amount: 5, input_currency: "BTC", fiat: "EUR" } })).status).toBe(500);
    expect((await api.api("GET", "/orders/", { key: m.key })).json).toEqual([]);
    await api.control("POST", "/faults", { endpoint: "device.create", kind: "http_500", count: 5 });
    expect((await api.control("DELETE", "/faults")).json.faults).toEqual([]);
    expect((await api.api("POST", "/device/", { key: m.key, json: { name: "ok" } })).status).toBe(200);
    expect((await api.control("POST", "/faults", { endpoint: "nowhere", kind: "http_500" })).status).toBe(400);
  });

  it("refuses an http_429 after_create: the real gateway's throttles answer before the view runs", async () => {
    const armed = await api.control("POST", "/faults", { endpoint: "orders.create", kind: "http_429", count: 1, after_create: true });
    expect(armed.status).toBe(400);
    expect(armed.json.detail).toMatch(/after_create: .*throttles answer before the view runs/);
    expect((await api.control("GET", "/faults")).json.faults).toEqual([]);
    // Before the work, as the real gateway does, it is armed.
    expect((await api.control("POST", "/faults", { endpoint: "orders.create", kind: "http_429", count: 1, after_create: false })).status).toBe(200);
    await api.control("DELETE", "/faults");
  });

  it("refuses an http_404 or a proxy_400 after_create: a refusal comes before anything is created", async () => {
    for (const kind of ["http_404", "proxy_400"]) {
      const armed = await api.control("POST", "/faults", { endpoint: "orders.create", kind, count: 1, after_create: true });
      expect(armed.status, kind).toBe(400);
      expect(armed.json.detail).toMatch(/after_create: .*cannot come after the work is done/);
    }
    expect((await api.control("GET", "/faults")).json.faults).toEqual([]);
  });
});

describe("dashboard", () => {
  it("lists devices and lets the owner set the notification URL and regenerate the Secret Key", async () => {
    const m = await newMerchant(t.sandbox, "Dash shop");
    const page = await api.raw("GET", "/sandbox/dashboard");
    expect(page.status).toBe(200);
    expect(page.text).toContain(m.key);
    const form = (fields: Record<string, string>) =>
      call(t.sandbox.origin, "POST", `/sandbox/dashboard/devices/${m.key}`, { body: new URLSearchParams(fields) });
    expect((await form({ op: "notification_url", notification_url: "https://hooks.example/dash" })).status).toBe(303);
    expect((await form({ op: "regenerate_secret" })).status).toBe(303);
    const settings = (await api.raw("GET", `/sandbox/devices/${m.key}/settings`)).json;
    expect(settings.notification_url).toBe("https://hooks.example/dash");
    expect(settings.secret_key).not.toBe(m.secret);
    const bad = await form({ op: "notification_url", notification_url: "nope" });
    expect(bad.headers.get("location")).toContain("error=");
    expect((await form({ op: "disable" })).status).toBe(303);
    expect((await api.api("GET", "/currencies", { key: m.key })).status).toBe(403);
  });
});
