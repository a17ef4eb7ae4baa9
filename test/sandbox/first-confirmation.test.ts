// The first block confirmation (`confirm_once`): the gateway's "AC with safe=true", which
// the real service shows between the payment being seen and the order being completed. The
// order stays AC with every transaction confirmed and its amounts all confirmed, in the
// info read and the listing alike; no webhook goes out (the status did not change); it is
// refused outside AC; and the later `confirm` still ends the order as before, keeping the
// first confirmation's blocks.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { findCurrency } from "../../sandbox/catalogue.js";
import { Dec } from "../../sandbox/decimal.js";
import { blockHeightAt } from "../../sandbox/payment-targets.js";
import {
  action,
  call,
  client,
  createOrder,
  info,
  newMerchant,
  sandboxForThisFile,
  startReceiver,
  type NewMerchant,
  type WebhookReceiver,
} from "./helpers.js";

const t = sandboxForThisFile();
const URLS = { merchant_urlok: "https://shop.example/ok", merchant_urlko: "https://shop.example/ko" };
const MINUTE = 60_000;

async function variantA(symbol = "LTC", amount = "25.00", key?: string) {
  return createOrder(t.sandbox, { expected_output_amount: amount, input_currency: symbol, fiat: "EUR", ...URLS }, key);
}

async function act(id: string, body: Record<string, unknown>) {
  const r = await action(t.sandbox, id, body);
  if (r.status !== 200) throw new Error(`${JSON.stringify(body)} → ${r.status} ${r.text}`);
  return r.json;
}

/** The order as GET /orders/ lists it for the demo device. */
async function listed(identifier: string) {
  const r = await client(t.sandbox).api("GET", "/orders/");
  expect(r.status).toBe(200);
  const found = (r.json as Array<{ identifier: string }>).filter((o) => o.identifier === identifier);
  expect(found).toHaveLength(1);
  return found[0];
}

describe("the read of an order confirmed once", () => {
  it("is AC with safe true, every transaction confirmed with its block, and the whole amount confirmed", async () => {
    const o = await variantA("LTC", "25.00");
    t.clock.advance(2 * MINUTE);
    const ac = await act(o.identifier, { action: "pay", amount: "exact" });
    expect(ac).toMatchObject({ status: "AC", safe: false, confirmed_amount: 0, unconfirmed_amount: o.expected_input_amount });

    t.clock.advance(3 * MINUTE);
    const once = await act(o.identifier, { action: "confirm_once" });
    expect(once).toMatchObject({
      status: "AC",
      safe: true,
      unconfirmed_amount: 0,
      confirmed_amount: o.expected_input_amount,
      percentage: 100,
      received_amount: 25,
      good_fee: true,
    });
    // One rule in every status: confirmed + unconfirmed is what the transactions add up to.
    const sum = (once.transactions as Array<{ amount: number }>).reduce((s, tx) => s.plus(String(tx.amount)), new Dec(0));
    expect(new Dec(String(once.confirmed_amount)).plus(String(once.unconfirmed_amount)).eq(sum)).toBe(true);
    expect(once.transactions).toHaveLength(1);
    expect(once.transactions[0]).toMatchObject({
      confirmed: true,
      block: blockHeightAt(findCurrency("LTC")!.chain, t.clock.now()),
      tx_hash: ac.transactions[0].tx_hash,
      created_at: ac.transactions[0].created_at,
    });
    // The order changed (its amounts and safe flag), so edited_at moves, as on a second payment.
    expect(Date.parse(once.edited_at)).toBe(t.clock.now().getTime());
    expect(once.edited_at).not.toBe(ac.edited_at);

    expect(await info(t.sandbox, o.identifier)).toEqual(once);
    expect(await listed(o.identifier)).toEqual(once);
  });

  it("confirms every unconfirmed transaction of a partly paid order, which stays AC below 100 %", async () => {
    const o = await variantA("BTC", "40.00");
    await act(o.identifier, { action: "pay", amount: "less" });
    const once = await act(o.identifier, { action: "confirm_once" });
    expect(once).toMatchObject({ status: "AC", safe: true, unconfirmed_amount: 0, percentage: 50, received_amount: 20 });
    expect(once.confirmed_amount).toBe(once.transactions[0].amount);
  });

  it("a payment after the first confirmation makes the order unsafe again until it is confirmed once too", async () => {
    const o = await variantA("DOGE", "20.00");
    await act(o.identifier, { action: "pay", amount: "less" });
    const first = await act(o.identifier, { action: "confirm_once" });
    t.clock.advance(2 * MINUTE);
    const second = await act(o.identifier, { action: "pay", amount: "exact" });
    expect(second).toMatchObject({ status: "AC", safe: false, percentage: 100, confirmed_amount: first.confirmed_amount });
    expect(second.transactions.map((tx: { confirmed: boolean }) => tx.confirmed)).toEqual([true, false]);
    expect(new Dec(String(second.confirmed_amount)).plus(String(second.unconfirmed_amount)).eq(String(o.expected_input_amount))).toBe(true);

    t.clock.advance(2 * MINUTE);
    const again = await act(o.identifier, { action: "confirm_once" });
    expect(again).toMatchObject({ status: "AC", safe: true, unconfirmed_amount: 0, confirmed_amount: o.expected_input_amount });
    // The first transaction keeps the block it got; only the new one gets today's.
    expect(again.transactions[0].block).toBe(first.transactions[0].block);
    expect(again.transactions[1].block).toBeGreaterThan(first.transactions[0].block);
  });
});

describe("confirm after the first confirmation", () => {
  it("ends the order CO, keeping the first confirmation's blocks", async () => {
    const o = await variantA("LTC", "30.00");
    await act(o.identifier, { action: "pay", amount: "exact" });
    const once = await act(o.identifier, { action: "confirm_once" });
    t.clock.advance(5 * MINUTE);
    const co = await act(o.identifier, { action: "confirm" });
    expect(co).toMatchObject({ status: "CO", safe: true, unconfirmed_amount: 0, confirmed_amount: o.expected_input_amount, percentage: 100 });
    expect(co.transactions).toEqual(once.transactions);
    expect(await info(t.sandbox, o.identifier)).toEqual(co);
  });

  it("ends a partly paid order IA and one past its rate window OC, as without it", async () => {
    const short = await variantA("BTC");
    await act(short.identifier, { action: "pay", amount: "less" });
    await act(short.identifier, { action: "confirm_once" });
    expect((await act(short.identifier, { action: "confirm" })).status).toBe("IA");

    const late = await variantA("ETH");
    await act(late.identifier, { action: "pay", amount: "exact" });
    await act(late.identifier, { action: "confirm_once" });
    t.clock.advance(31 * MINUTE);
    expect((await info(t.sandbox, late.identifier)).status).toBe("AC");
    expect((await act(late.identifier, { action: "confirm" })).status).toBe("OC");
  });
});

describe("outside AC it is refused with 409", () => {
  type Setup = (id: string) => Promise<unknown>;
  const pay: Setup = (id) => act(id, { action: "pay", amount: "exact" });
  const cases: Array<[string, string, Setup[]]> = [
    ["NR", "", []],
    ["PE", "BTC", []],
    ["CO", "BTC", [pay, (id) => act(id, { action: "confirm" })]],
    ["CO", "BTCL", [pay]],
    ["IA", "BTC", [(id) => act(id, { action: "pay", amount: "less" }), (id) => act(id, { action: "confirm" })]],
    ["FA", "BTC", [pay, (id) => act(id, { action: "fail" })]],
    ["EX", "BTC", [(id) => act(id, { action: "expire" }), pay]],
    ["CA", "", [(id) => act(id, { action: "expire" })]],
    ["CM", "BTC", [pay, (id) => act(id, { action: "complete_by_merchant" })]],
    ["DE", "BTC", [(id) => act(id, { action: "delete" })]],
  ];

  it.each(cases)("%s (%s)", async (status, symbol, steps) => {
    const o = symbol ? await variantA(symbol, "10.00") : await createOrder(t.sandbox, { expected_output_amount: 10, ...URLS });
    for (const step of steps) await step(o.identifier);
    const before = await info(t.sandbox, o.identifier);
    expect(before.status).toBe(status);
    const r = await action(t.sandbox, o.identifier, { action: "confirm_once" });
    expect(r.status).toBe(409);
    expect(r.json.detail).toBe(`Cannot confirm once: the payment is in status ${status}.`);
    expect(await info(t.sandbox, o.identifier)).toEqual(before);
  });

  it("and in AC once every transaction already has its block", async () => {
    const o = await variantA("BTC");
    await act(o.identifier, { action: "pay", amount: "exact" });
    const once = await act(o.identifier, { action: "confirm_once" });
    t.clock.advance(MINUTE);
    const r = await action(t.sandbox, o.identifier, { action: "confirm_once" });
    expect(r.status).toBe(409);
    expect(r.json.detail).toMatch(/^Cannot confirm once: every transaction/);
    expect(await info(t.sandbox, o.identifier)).toEqual(once);
  });

  it("a body with extra fields is still the action, and an unknown order is 404", async () => {
    const o = await variantA("BTC");
    await act(o.identifier, { action: "pay", amount: "exact" });
    expect((await act(o.identifier, { action: "confirm_once", amount: "exact" })).safe).toBe(true);
    expect((await action(t.sandbox, "0b7c2b8e-5f0e-4a4c-9d1e-6f3a2b1c0d9e", { action: "confirm_once" })).status).toBe(404);
  });
});

describe("webhooks", () => {
  let receiver: WebhookReceiver;
  let merchant: NewMerchant;

  beforeEach(async () => {
    receiver = await startReceiver();
    merchant = await newMerchant(t.sandbox, "First block shop");
    const r = await client(t.sandbox).control("POST", `/devices/${merchant.key}/settings`, { notification_url: receiver.url });
    expect(r.status).toBe(200);
  });
  afterEach(async () => {
    await receiver.close();
  });

  it("none for the first confirmation: the order's deliveries are AC then CO, the CO one safe", async () => {
    const o = await variantA("LTC", "30.00", merchant.key);
    await act(o.identifier, { action: "pay", amount: "exact" });
    await vi.waitFor(() => expect(receiver.received).toHaveLength(1), { timeout: 10_000, interval: 20 });
    await act(o.identifier, { action: "confirm_once" });
    const recorded = await call(t.sandbox.origin, "GET", `/sandbox/webhooks/deliveries?order=${o.identifier}`);
    expect(recorded.json.map((d: { status: string }) => d.status)).toEqual(["AC"]);

    // A device's deliveries go out in order: one sent for confirm_once would come before CO's.
    await act(o.identifier, { action: "confirm" });
    await vi.waitFor(() => expect(receiver.received).toHaveLength(2), { timeout: 10_000, interval: 20 });
    const bodies = receiver.received.map((hook) => JSON.parse(hook.rawBody));
    expect(bodies.map((b) => b.status)).toEqual(["AC", "CO"]);
    expect(bodies[0]).toMatchObject({ safe: false, confirmed_amount: 0 });
    expect(bodies[1]).toMatchObject({ safe: true, unconfirmed_amount: 0, confirmed_amount: o.expected_input_amount });
    const all = await call(t.sandbox.origin, "GET", `/sandbox/webhooks/deliveries?order=${o.identifier}`);
    expect(all.json).toHaveLength(2);
  });
});

describe("the payment page", () => {
  async function page(webUrl: string) {
    const r = await call(t.sandbox.origin, "GET", `${new URL(webUrl).pathname}?stay=1`);
    expect(r.status).toBe(200);
    return r.text;
  }
  const button = (html: string) => /<button type="submit" data-action="confirm_once" ?(disabled)?>([^<]*)<\/button>/.exec(html);

  it("offers the first block while a transaction waits for one, in the order's language (es by default)", async () => {
    const o = await variantA("BTC");
    let html = await page(o.web_url);
    expect(button(html)?.slice(1)).toEqual(["disabled", "Solo el primer bloque (sigue en AC)"]);

    await act(o.identifier, { action: "pay", amount: "exact" });
    html = await page(o.web_url);
    expect(button(html)?.slice(1)).toEqual([undefined, "Solo el primer bloque (sigue en AC)"]);
    expect(html).not.toContain('id="first-block"');

    const code = new URL(o.web_url).pathname.split("/")[2];
    const posted = await call(t.sandbox.origin, "POST", `/pay/${code}/actions`, {
      body: new URLSearchParams({ action: "confirm_once", stay: "1" }).toString(),
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(posted.status).toBe(303);
    expect(posted.headers.get("location")).toBe(`/pay/${code}/?stay=1`);
    const read = await info(t.sandbox, o.identifier);
    expect(read).toMatchObject({ status: "AC", safe: true });

    html = await page(o.web_url);
    expect(button(html)?.[1]).toBe("disabled");
    expect(html).toContain("Primera confirmación de bloque recibida (safe)");
  });

  it("in English otherwise, and the page's Confirm button stays the only one so named", async () => {
    const o = await createOrder(t.sandbox, { expected_output_amount: "25.00", input_currency: "BTC", fiat: "EUR", language: "en", ...URLS });
    await act(o.identifier, { action: "pay", amount: "exact" });
    const html = await page(o.web_url);
    expect(button(html)?.slice(1)).toEqual([undefined, "First block only (stays AC)"]);
    expect(html.match(/>[^<]*confirm[^<]*<\/button>/gi)).toEqual([">Confirm</button>"]);
  });
});
