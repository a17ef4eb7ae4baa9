// Webhook delivery over real HTTP to a local receiver: one signed POST per
// status change, Python json.dumps spacing, the FACTS payload, the recorded
// attempts, no retries, the 5 s time-out, and the drop / duplicate / delay /
// reorder fault modes.
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import {
  action,
  client,
  createOrder,
  expectedSignature,
  newMerchant,
  startReceiver,
  startTestSandbox,
  type NewMerchant,
  sandboxForThisFile,
  type WebhookReceiver,
} from "./helpers.js";

const t = sandboxForThisFile();
let api: ReturnType<typeof client>;
let receiver: WebhookReceiver;
let merchant: NewMerchant;

beforeAll(async () => {
  api = client(t.sandbox);
});
beforeEach(async () => {
  receiver = await startReceiver();
  merchant = await newMerchant(t.sandbox, "Webhook shop");
  const r = await api.control("POST", `/devices/${merchant.key}/settings`, { notification_url: receiver.url });
  expect(r.status).toBe(200);
});
afterEach(async () => {
  await receiver.close();
});

async function newOrder(symbol = "BTC") {
  return createOrder(t.sandbox, { expected_output_amount: "30.00", input_currency: symbol, fiat: "EUR", reference: "REF-7" }, merchant.key);
}

async function deliveries(orderId: string) {
  return (await api.raw("GET", `/sandbox/webhooks/deliveries?order=${orderId}`)).json as Array<Record<string, unknown>>;
}

async function waitForReceived(n: number) {
  await vi.waitFor(() => expect(receiver.received.length).toBeGreaterThanOrEqual(n), { timeout: 10_000, interval: 20 });
}

function statusOf(i: number): string {
  return JSON.parse(receiver.received[i]?.rawBody ?? "{}").status;
}

describe("signed deliveries", () => {
  it("sends one signed POST per status change with the documented payload, in Python spacing", async () => {
    const o = await newOrder();
    await action(t.sandbox, o.identifier, { action: "pay", amount: "exact" });
    await waitForReceived(1);
    await action(t.sandbox, o.identifier, { action: "confirm" });
    await waitForReceived(2);
    expect(receiver.received.map((_, i) => statusOf(i))).toEqual(["AC", "CO"]);

    for (const hook of receiver.received) {
      const nonce = String(hook.headers["x-nonce"]);
      expect(nonce).toMatch(/^\d{10}$/);
      expect(Math.abs(Number(nonce) - Date.now() / 1000)).toBeLessThan(300);
      expect(hook.headers["x-signature"]).toBe(expectedSignature(merchant.secret, nonce, hook.rawBody));
      expect(hook.headers["content-type"]).toBe("application/json");
      expect(hook.rawBody).toContain('", "');
      expect(hook.rawBody).toContain('": ');
      expect(hook.rawBody).not.toMatch(/","|":"/);
      expect(JSON.stringify(JSON.parse(hook.rawBody))).not.toBe(hook.rawBody);
    }
    const co = JSON.parse(receiver.received[1]?.rawBody ?? "{}");
    expect(Object.keys(co)).toEqual([
      "fiat_amount", "status", "crypto_amount", "unconfirmed_amount", "confirmed_amount", "currency", "identifier",
      "fiat_currency", "safe", "received_amount", "reference", "edited_at",
    ]);
    expect(co).toMatchObject({
      identifier: o.identifier, status: "CO", fiat_amount: 30, fiat_currency: "EUR", currency: "BTC", safe: true,
      received_amount: 30, reference: "REF-7", unconfirmed_amount: 0, crypto_amount: o.expected_input_amount,
      confirmed_amount: o.expected_input_amount,
    });
    expect(receiver.received[1]?.rawBody).toContain('"fiat_amount": 30.0');
    const info = (await api.api("GET", `/orders/info/${o.identifier}`, { key: merchant.key })).json[0];
    expect(co.edited_at).toBe(info.edited_at);

    const log = await deliveries(o.identifier);
    expect(log).toHaveLength(2);
    expect(log[0]).toMatchObject({ url: receiver.url, status_code: 200, ok: true, error: null, status: "AC" });
    expect(log[0]?.body).toBe(receiver.received[0]?.rawBody);
    expect((log[0]?.headers as Record<string, string>)["X-SIGNATURE"]).toBe(receiver.received[0]?.headers["x-signature"]);
    expect(typeof log[0]?.at).toBe("string");
  });

  it("does not notify on creation, nor on changes that keep the status (a second payment)", async () => {
    const o = await newOrder();
    await action(t.sandbox, o.identifier, { action: "pay", amount: "less" });
    await action(t.sandbox, o.identifier, { action: "pay", amount: "less" });
    await action(t.sandbox, o.identifier, { action: "complete_by_merchant" });
    await waitForReceived(2);
    expect(receiver.received.map((_, i) => statusOf(i))).toEqual(["AC", "CM"]);
    expect(await deliveries(o.identifier)).toHaveLength(2);
  });

  it("notifies NR → PE when the shopper picks the currency, and null amounts while NR", async () => {
    const o = await createOrder(
      t.sandbox,
      { expected_output_amount: 10, fiat: "EUR", merchant_urlok: "https://s.example/ok", merchant_urlko: "https://s.example/ko" },
      merchant.key,
    );
    await action(t.sandbox, o.identifier, { action: "choose_currency", currency: "XLM" });
    await action(t.sandbox, o.identifier, { action: "delete" });
    await waitForReceived(2);
    expect(JSON.parse(receiver.received[0]?.rawBody ?? "{}")).toMatchObject({ status: "PE", currency: "XLM" });
    expect(statusOf(1)).toBe("DE");
    const nr = await createOrder(
      t.sandbox,
      { expected_output_amount: 10, fiat: "EUR", merchant_urlok: "https://s.example/ok", merchant_urlko: "https://s.example/ko" },
      merchant.key,
    );
    await action(t.sandbox, nr.identifier, { action: "expire" });
    await waitForReceived(3);
    expect(JSON.parse(receiver.received[2]?.rawBody ?? "{}")).toMatchObject({ status: "CA", crypto_amount: null, currency: null });
  });

  it("uses the device's current Secret Key, and sends nothing without a notification URL", async () => {
    const rotated = await api.control("POST", `/devices/${merchant.key}/settings`, { regenerate_secret: true });
    const newSecret = rotated.json.secret_key as string;
    expect(newSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(newSecret).not.toBe(merchant.secret);
    const o = await newOrder();
    await action(t.sandbox, o.identifier, { action: "delete" });
    await waitForReceived(1);
    const hook = receiver.received[0]!;
    expect(hook.headers["x-signature"]).toBe(expectedSignature(newSecret, String(hook.headers["x-nonce"]), hook.rawBody));
    expect(hook.headers["x-signature"]).not.toBe(expectedSignature(merchant.secret, String(hook.headers["x-nonce"]), hook.rawBody));

    await api.control("POST", `/devices/${merchant.key}/settings`, { notification_url: null });
    const quiet = await newOrder();
    await action(t.sandbox, quiet.identifier, { action: "delete" });
    expect(await deliveries(quiet.identifier)).toEqual([]);
  });

  it("does not retry: a receiver answering 500 gets one attempt, recorded as failed", async () => {
    receiver.respondWith = 500;
    const o = await newOrder();
    await action(t.sandbox, o.identifier, { action: "delete" });
    await vi.waitFor(async () => expect(await deliveries(o.identifier)).toHaveLength(1), { timeout: 10_000, interval: 20 });
    const [record] = await deliveries(o.identifier);
    expect(record).toMatchObject({ status_code: 500, ok: false, error: "receiver answered 500" });
    await action(t.sandbox, (await newOrder()).identifier, { action: "delete" });
    await waitForReceived(2);
    expect(receiver.received).toHaveLength(2);
    expect(await deliveries(o.identifier)).toHaveLength(1);
  });

  it("gives up after 5 s when the receiver does not answer", async () => {
    receiver.respondWith = "hang";
    const o = await newOrder();
    await action(t.sandbox, o.identifier, { action: "delete" });
    await vi.waitFor(async () => expect(await deliveries(o.identifier)).toHaveLength(1), { timeout: 15_000, interval: 100 });
    const [record] = await deliveries(o.identifier);
    expect(record).toMatchObject({ ok: false, status_code: null, error: "timed out after 5000 ms" });
  }, 20_000);

  it("records an unreachable receiver as a failed attempt", async () => {
    await receiver.close();
    const o = await newOrder();
    await action(t.sandbox, o.identifier, { action: "delete" });
    await vi.waitFor(async () => expect(await deliveries(o.identifier)).toHaveLength(1), { timeout: 10_000, interval: 20 });
    const [record] = await deliveries(o.identifier);
    expect(record?.ok).toBe(false);
    expect(String(record?.error)).toMatch(/ECONNREFUSED|fetch failed/);
  });
});

describe("fault modes", () => {
  async function setFault(body: Record<string, unknown>) {
    const r = await api.control("POST", `/devices/${merchant.key}/webhook-faults`, body);
    expect(r.status).toBe(200);
    return r.json;
  }

  it("drop: the next delivery is not sent but recorded; later ones go through", async () => {
    expect(await setFault({ mode: "drop", count: 1 })).toEqual({ mode: "drop", delay_ms: 0, count: 1 });
    const o = await newOrder();
    await action(t.sandbox, o.identifier, { action: "pay", amount: "exact" });
    await action(t.sandbox, o.identifier, { action: "confirm" });
    await waitForReceived(1);
    await vi.waitFor(async () => expect(await deliveries(o.identifier)).toHaveLength(2), { timeout: 10_000, interval: 20 });
    expect(receiver.received.map((_, i) => statusOf(i))).toEqual(["CO"]);
    const log = await deliveries(o.identifier);
    expect(log[0]).toMatchObject({ status: "AC", fault: "drop", ok: false, status_code: null });
    expect(log[1]).toMatchObject({ status: "CO", ok: true });
    expect((await api.raw("GET", `/sandbox/devices/${merchant.key}/webhook-faults`)).json.mode).toBe("deliver");
  });

  it("duplicate: the same bytes, nonce and signature arrive twice, then the same bytes signed again with a later nonce", async () => {
    await setFault({ mode: "duplicate", count: 1 });
    const o = await newOrder();
    await action(t.sandbox, o.identifier, { action: "delete" });
    await waitForReceived(3);
    const [a, b, c] = receiver.received;
    expect(a?.rawBody).toBe(b?.rawBody);
    expect(a?.headers["x-nonce"]).toBe(b?.headers["x-nonce"]);
    expect(a?.headers["x-signature"]).toBe(b?.headers["x-signature"]);
    expect(c?.rawBody).toBe(a?.rawBody);
    expect(Number(c?.headers["x-nonce"])).toBe(Number(a?.headers["x-nonce"]) + 1);
    expect(c?.headers["x-signature"]).not.toBe(a?.headers["x-signature"]);
    expect((await deliveries(o.identifier)).map((d) => d.fault)).toEqual(["duplicate", "duplicate", "duplicate: signed again"]);
  });

  it("delay: the delivery is held back, then sent and recorded as delayed", async () => {
    await setFault({ mode: "delay", delay_ms: 60_000, count: 1 });
    const held = await newOrder();
    await action(t.sandbox, held.identifier, { action: "delete" });
    expect(await deliveries(held.identifier)).toEqual([]);
    expect(receiver.received).toEqual([]);
    // Deliveries of a device keep their order: the next one waits behind the held one.
    const next = await newOrder();
    await action(t.sandbox, next.identifier, { action: "delete" });
    expect(await deliveries(next.identifier)).toEqual([]);
    expect((await api.raw("GET", `/sandbox/devices/${merchant.key}/webhook-faults`)).json.mode).toBe("deliver");
  });

  it("delay (short): arrives after the wait with the delay noted", async () => {
    const quick = await startTestSandbox();
    const rcv = await startReceiver();
    try {
      const c = client(quick.sandbox);
      await c.control("POST", `/devices/${quick.sandbox.demo.deviceKey}/settings`, { notification_url: rcv.url });
      await c.control("POST", `/devices/${quick.sandbox.demo.deviceKey}/webhook-faults`, { mode: "delay", delay_ms: 150 });
      const o = await createOrder(quick.sandbox, { expected_output_amount: 10, input_currency: "BTC", fiat: "EUR" });
      await action(quick.sandbox, o.identifier, { action: "delete" });
      await vi.waitFor(() => expect(rcv.received).toHaveLength(1), { timeout: 10_000, interval: 20 });
      const log = (await c.raw("GET", `/sandbox/webhooks/deliveries?order=${o.identifier}`)).json;
      expect(log[0]).toMatchObject({ ok: true, fault: "delay 150 ms" });
    } finally {
      await rcv.close();
      await quick.stop();
    }
  });

  it("reorder: a held delivery arrives after the next one", async () => {
    await setFault({ mode: "reorder", count: 1, delay_ms: 60_000 });
    const o = await newOrder();
    await action(t.sandbox, o.identifier, { action: "pay", amount: "exact" });
    await action(t.sandbox, o.identifier, { action: "confirm" });
    await waitForReceived(2);
    expect(receiver.received.map((_, i) => statusOf(i))).toEqual(["CO", "AC"]);
    const log = await deliveries(o.identifier);
    expect(log.map((d) => d.status)).toEqual(["CO", "AC"]);
  });

  it("reorder: with nothing after it, the held delivery is released after the hold time", async () => {
    await setFault({ mode: "reorder", count: 1, delay_ms: 100 });
    const o = await newOrder();
    await action(t.sandbox, o.identifier, { action: "delete" });
    await waitForReceived(1);
    expect(statusOf(0)).toBe("DE");
  });

  it("rejects unknown modes and devices", async () => {
    expect((await api.control("POST", `/devices/${merchant.key}/webhook-faults`, { mode: "explode" })).status).toBe(400);
    expect((await api.control("POST", "/devices/0b7c2b8e-5f0e-4a4c-9d1e-6f3a2b1c0d9e/webhook-faults", { mode: "drop" })).status).toBe(404);
  });
});
