// State survives a restart: devices, settings, orders with their transactions,
// the simulated clock; the demo merchant is seeded once.
import { describe, expect, it } from "vitest";
import { rm } from "node:fs/promises";
import { startSandbox } from "../../sandbox/server.js";
import { DEMO_DEVICE_KEY, DEMO_SECRET_KEY_HEX } from "../../sandbox/demo.js";
import { action, client, createOrder, info, newMerchant, startTestSandbox, TestClock } from "./helpers.js";

describe("persistence", () => {
  it("keeps devices, settings, orders, transactions and the clock offset across a restart", async () => {
    const clock = new TestClock();
    const first = await startTestSandbox({}, clock);
    const m = await newMerchant(first.sandbox, "Persistent shop");
    const api = client(first.sandbox);
    await api.control("POST", `/devices/${m.key}/settings`, { notification_url: "http://127.0.0.1:9/hooks" });
    const extra = (await api.api("POST", "/device/", { key: m.key, json: { name: "till-2" } })).json.identifier as string;
    const order = await createOrder(first.sandbox, { expected_output_amount: "12.34", input_currency: "XRP", fiat: "EUR", reference: "P-1" }, m.key);
    await action(first.sandbox, order.identifier, { action: "pay", amount: "exact" });
    const advanced = await api.control("POST", "/clock", { advance_seconds: 3600 });
    expect(advanced.status).toBe(200);
    const before = await info(first.sandbox, order.identifier, m.key);
    await first.sandbox.close();

    const second = await startSandbox({ port: 0, host: "127.0.0.1", dbPath: first.dbPath, clock, tickMs: 60_000 });
    try {
      const again = client(second);
      expect(await info(second, order.identifier, m.key)).toEqual(before);
      expect(await info(second, order.identifier, extra)).toEqual(before);
      const settings = (await again.raw("GET", `/sandbox/devices/${m.key}/settings`)).json;
      expect(settings).toMatchObject({ notification_url: "http://127.0.0.1:9/hooks", secret_key: m.secret, enabled: true });
      const now = (await again.raw("GET", "/sandbox/clock")).json;
      expect(now.offset_seconds).toBe(3600);
      expect(Date.parse(now.now)).toBe(clock.now().getTime() + 3_600_000);
      expect((await action(second, order.identifier, { action: "confirm" })).json.status).toBe("OC");
    } finally {
      await second.close();
      await rm(first.dir, { recursive: true, force: true });
    }
  });

  it("seeds the demo merchant once, with its fixed key and Secret Key", async () => {
    const first = await startTestSandbox();
    expect(first.sandbox.demo).toMatchObject({ deviceKey: DEMO_DEVICE_KEY, secretKeyHex: DEMO_SECRET_KEY_HEX, deviceName: "Demo device" });
    await first.sandbox.close();
    const second = await startSandbox({ port: 0, dbPath: first.dbPath, clock: first.clock });
    try {
      const settings = (await client(second).raw("GET", `/sandbox/devices/${DEMO_DEVICE_KEY}/settings`)).json;
      expect(settings).toMatchObject({ name: "Demo device", secret_key: DEMO_SECRET_KEY_HEX, identifier: DEMO_DEVICE_KEY });
      const page = await client(second).raw("GET", "/sandbox/dashboard");
      expect(page.text.split(DEMO_DEVICE_KEY).length - 1).toBeGreaterThanOrEqual(1);
      expect(page.text.match(/Demo device \(#/g)).toHaveLength(1);
    } finally {
      await second.close();
      await rm(first.dir, { recursive: true, force: true });
    }
  });

  it("can start without the demo merchant", async () => {
    const bare = await startTestSandbox({ seedDemo: false });
    try {
      expect((await client(bare.sandbox).api("GET", "/currencies")).status).toBe(403);
    } finally {
      await bare.stop();
    }
  });

  it("runs on an in-memory database too", async () => {
    const mem = await startSandbox({ port: 0, dbPath: ":memory:" });
    try {
      const o = await createOrder(mem, { expected_output_amount: 5, input_currency: "BTC", fiat: "EUR" });
      expect((await info(mem, o.identifier)).status).toBe("PE");
    } finally {
      await mem.close();
    }
  });
});
