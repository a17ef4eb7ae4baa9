// Every transition of the gateway's order lifecycle, driven through the
// sandbox's actions and clock over HTTP: NR→PE→AC→CO, EX per currency window,
// CA after 24 h, late payments after EX, CM/DE from each open state, IA, OC,
// FA, Lightning, and the amounts that must stay consistent along the way.
import { describe, expect, it, vi } from "vitest";
import { findCurrency } from "../../sandbox/catalogue.js";
import { Dec } from "../../sandbox/decimal.js";
import { expectedInputAmount, rateInFiat } from "../../sandbox/price-feed.js";
import { action, client, createOrder, info, startReceiver, startTestSandbox, sandboxForThisFile } from "./helpers.js";

const t = sandboxForThisFile();
const URLS = { merchant_urlok: "https://shop.example/ok", merchant_urlko: "https://shop.example/ko" };
const MINUTE = 60_000;

async function variantA(symbol = "BTC", amount: number | string = "25.00") {
  return createOrder(t.sandbox, { expected_output_amount: amount, input_currency: symbol, fiat: "EUR", ...URLS });
}

async function act(id: string, body: Record<string, unknown>) {
  const r = await action(t.sandbox, id, body);
  if (r.status !== 200) throw new Error(`${JSON.stringify(body)} → ${r.status} ${r.text}`);
  return r.json;
}

describe("happy paths", () => {
  it("variant B: NR → PE (currency chosen) → AC (payment seen) → CO (confirmed), amounts consistent at each step", async () => {
    const created = await createOrder(t.sandbox, { expected_output_amount: "40.00", fiat: "EUR", ...URLS });
    const nr = await info(t.sandbox, created.identifier);
    expect(nr).toMatchObject({ status: "NR", crypto_amount: null, currency_id: null, address: null, expired_time: null, percentage: 0 });

    const chosenAt = t.clock.now();
    const pe = await act(created.identifier, { action: "choose_currency", currency: "LTC" });
    const def = findCurrency("LTC")!;
    const rate = rateInFiat(def, "EUR", chosenAt);
    const expected = expectedInputAmount(new Dec("40.00"), rate, def.decimals);
    expect(pe.status).toBe("PE");
    expect(pe.currency_id).toBe("LTC");
    expect(new Dec(pe.crypto_amount).eq(expected)).toBe(true);
    expect(pe.address).toMatch(/^ltc1q/);
    expect(Date.parse(pe.expired_time) - chosenAt.getTime()).toBe(def.windowMinutes * MINUTE);
    expect(pe.transactions).toEqual([]);

    t.clock.advance(2 * MINUTE);
    const ac = await act(created.identifier, { action: "pay", amount: "exact" });
    expect(ac).toMatchObject({ status: "AC", safe: false, percentage: 100, confirmed_amount: 0, received_amount: 40, good_fee: true });
    expect(ac.unconfirmed_amount).toBe(pe.crypto_amount);
    expect(ac.transactions).toHaveLength(1);
    expect(ac.transactions[0]).toMatchObject({ confirmed: false, block: null, currency: "LTC", amount: pe.crypto_amount });
    expect(ac.transactions[0].tx_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(Date.parse(ac.edited_at)).toBe(t.clock.now().getTime());

    t.clock.advance(5 * MINUTE);
    const co = await act(created.identifier, { action: "confirm" });
    expect(co).toMatchObject({ status: "CO", safe: true, percentage: 100, unconfirmed_amount: 0, received_amount: 40 });
    expect(co.confirmed_amount).toBe(co.crypto_amount);
    expect(Number.isInteger(co.transactions[0].block)).toBe(true);
    expect(co.transactions[0].confirmed).toBe(true);
    expect(await info(t.sandbox, created.identifier)).toEqual(co);
  });

  it("variant A starts in PE with its rate fixed for the whole window", async () => {
    const createdAt = t.clock.now();
    const o = await variantA("ETH", "100.00");
    const def = findCurrency("ETH")!;
    const rate = rateInFiat(def, "EUR", createdAt);
    expect(new Dec(String(o.rate)).eq(rate)).toBe(true);
    expect(new Dec(String(o.expected_input_amount)).eq(expectedInputAmount(new Dec(100), rate, def.decimals))).toBe(true);
    // fiat / rate rounded up: paying expected × rate covers the fiat amount
    expect(new Dec(String(o.expected_input_amount)).times(rate).gte(100)).toBe(true);
    t.clock.advance(12 * MINUTE);
    const later = await variantA("ETH", "100.00");
    expect(later.rate).not.toBe(o.rate);
    const again = await info(t.sandbox, o.identifier);
    expect(again.crypto_amount).toBe(o.expected_input_amount);
    expect(again.status).toBe("PE");
  });

  it("an overpayment ends as CO with a percentage above 100", async () => {
    const o = await variantA("DOGE", "10.00");
    await act(o.identifier, { action: "pay", amount: "more" });
    const co = await act(o.identifier, { action: "confirm" });
    expect(co.status).toBe("CO");
    expect(co.percentage).toBeGreaterThan(100);
    expect(co.confirmed_amount).toBeGreaterThan(co.crypto_amount);
  });

  it("two partial payments that add up to the amount end as CO", async () => {
    const o = await variantA("BTC", "50.00");
    const half = await act(o.identifier, { action: "pay", amount: "less" });
    expect(half.status).toBe("AC");
    expect(half.percentage).toBeLessThan(100);
    const full = await act(o.identifier, { action: "pay", amount: "exact" });
    expect(full.status).toBe("AC");
    expect(full.transactions).toHaveLength(2);
    expect(full.percentage).toBe(100);
    expect((await act(o.identifier, { action: "confirm" })).status).toBe("CO");
  });

  it("Lightning (BTCL) settles at once: pay → CO, with no address and an off-chain transaction", async () => {
    const o = await variantA("BTCL", "10.00");
    expect(o.address).toBeNull();
    const paid = await act(o.identifier, { action: "pay", amount: "exact" });
    expect(paid.status).toBe("CO");
    expect(paid.transactions[0]).toMatchObject({ confirmed: true, block: null });
    const other = await variantA("BTCL", "10.00");
    const less = await action(t.sandbox, other.identifier, { action: "pay", amount: "less" });
    expect(less.status).toBe(409);
  });
});

describe("unhappy ends", () => {
  it("IA: confirming less than expected", async () => {
    const o = await variantA("SOL");
    await act(o.identifier, { action: "pay", amount: "less" });
    const ia = await act(o.identifier, { action: "confirm" });
    expect(ia.status).toBe("IA");
    expect(ia.percentage).toBe(50);
    expect(ia.received_amount).toBe(12.5);
  });

  it("OC: the payment is confirmed after the rate window has passed", async () => {
    const o = await variantA("ETH");
    await act(o.identifier, { action: "pay", amount: "exact" });
    t.clock.advance(31 * MINUTE);
    expect((await info(t.sandbox, o.identifier)).status).toBe("AC");
    expect((await act(o.identifier, { action: "confirm" })).status).toBe("OC");
  });

  it("FA: the seen transaction fails", async () => {
    const o = await variantA("BCH");
    await act(o.identifier, { action: "pay", amount: "exact" });
    const fa = await act(o.identifier, { action: "fail" });
    expect(fa.status).toBe("FA");
    expect(fa.safe).toBe(false);
    expect(fa.transactions[0].confirmed).toBe(false);
  });

  const WINDOWS: Array<[string, number]> = [
    ["BTC", 60], ["BTCL", 15], ["ETH", 15], ["USDC_ERC20", 30], ["USDC_POLYGON", 20], ["USDT_TRC20", 20], ["USDT_ERC20", 30],
    ["LTC", 45], ["BCH", 45], ["DOGE", 20], ["SOL", 15], ["XRP", 15], ["XLM", 15], ["ALGO", 15],
  ];

  it.each(WINDOWS)("EX: an unpaid %s order expires exactly %i minutes after its currency was fixed", async (symbol, minutes) => {
    const o = await variantA(symbol, "20.00");
    const first = await info(t.sandbox, o.identifier);
    expect(Date.parse(first.expired_time) - Date.parse(first.created_at)).toBe(minutes * MINUTE);
    t.clock.advance(minutes * MINUTE - 1000);
    expect((await info(t.sandbox, o.identifier)).status).toBe("PE");
    t.clock.advance(1000);
    const ex = await info(t.sandbox, o.identifier);
    expect(ex.status).toBe("EX");
    expect(ex.edited_at).not.toBe(first.edited_at);
  });

  it("every window lies within the specification's 15-60 minutes", () => {
    for (const [, minutes] of WINDOWS) {
      expect(minutes).toBeGreaterThanOrEqual(15);
      expect(minutes).toBeLessThanOrEqual(60);
    }
  });

  it("CA: an NR order never given a currency is cancelled after 24 h, not before", async () => {
    const o = await createOrder(t.sandbox, { expected_output_amount: 10, ...URLS });
    t.clock.advance(24 * 60 * MINUTE - 1000);
    expect((await info(t.sandbox, o.identifier)).status).toBe("NR");
    t.clock.advance(1000);
    expect((await info(t.sandbox, o.identifier)).status).toBe("CA");
    expect((await action(t.sandbox, o.identifier, { action: "choose_currency", currency: "BTC" })).status).toBe(409);
  });

  it("a PE order ends as EX, never CA, even when read a day later", async () => {
    const o = await variantA("BTC");
    t.clock.advance(25 * 60 * MINUTE);
    expect((await info(t.sandbox, o.identifier)).status).toBe("EX");
  });

  it("a late payment after EX is recorded as a transaction without changing the status", async () => {
    const o = await variantA("XRP");
    t.clock.advance(16 * MINUTE);
    const late = await act(o.identifier, { action: "pay", amount: "exact" });
    expect(late.status).toBe("EX");
    expect(late.transactions).toHaveLength(1);
    expect(late.unconfirmed_amount).toBe(o.expected_input_amount);
    expect(late.percentage).toBe(100);
    const confirmed = await act(o.identifier, { action: "confirm" });
    expect(confirmed.status).toBe("EX");
    expect(confirmed.confirmed_amount).toBe(o.expected_input_amount);
    expect(confirmed.transactions[0].confirmed).toBe(true);
  });

  it("the expire action ends a PE order as EX now and an NR order as CA", async () => {
    const pe = await variantA("BTC");
    const ex = await act(pe.identifier, { action: "expire" });
    expect(ex.status).toBe("EX");
    expect(Date.parse(ex.expired_time)).toBe(t.clock.now().getTime());
    const nr = await createOrder(t.sandbox, { expected_output_amount: 10, ...URLS });
    expect((await act(nr.identifier, { action: "expire" })).status).toBe("CA");
  });
});

describe("merchant actions", () => {
  async function orderIn(state: "NR" | "PE" | "AC"): Promise<string> {
    if (state === "NR") return (await createOrder(t.sandbox, { expected_output_amount: 10, ...URLS })).identifier;
    const o = await variantA("BTC");
    if (state === "AC") await act(o.identifier, { action: "pay", amount: "exact" });
    return o.identifier;
  }

  it.each([
    ["NR", "complete_by_merchant", "CM"],
    ["PE", "complete_by_merchant", "CM"],
    ["AC", "complete_by_merchant", "CM"],
    ["NR", "delete", "DE"],
    ["PE", "delete", "DE"],
    ["AC", "delete", "DE"],
  ] as const)("from %s, %s ends as %s", async (state, name, end) => {
    const id = await orderIn(state);
    expect((await info(t.sandbox, id)).status).toBe(state);
    expect((await act(id, { action: name })).status).toBe(end);
    for (const again of ["complete_by_merchant", "delete", "pay", "confirm", "expire"]) {
      const r = await action(t.sandbox, id, again === "pay" ? { action: "pay", amount: "exact" } : { action: again });
      expect(r.status).toBe(409);
      expect(typeof r.json.detail).toBe("string");
    }
  });
});

describe("actions not allowed in the current state answer 409", () => {
  it.each([
    ["NR", { action: "pay", amount: "exact" }],
    ["NR", { action: "confirm" }],
    ["NR", { action: "fail" }],
    ["PE", { action: "confirm" }],
    ["PE", { action: "fail" }],
    ["PE", { action: "choose_currency", currency: "ETH" }],
    ["AC", { action: "expire" }],
    ["AC", { action: "choose_currency", currency: "ETH" }],
  ] as const)("%s: %j", async (state, body) => {
    const o =
      state === "NR"
        ? await createOrder(t.sandbox, { expected_output_amount: 10, ...URLS })
        : await variantA("BTC");
    if (state === "AC") await act(o.identifier, { action: "pay", amount: "exact" });
    const r = await action(t.sandbox, o.identifier, body);
    expect(r.status).toBe(409);
    expect(r.json.detail).toMatch(/Cannot|no currency/);
    expect((await info(t.sandbox, o.identifier)).status).toBe(state);
  });

  it("choosing a currency whose limits exclude the amount is refused", async () => {
    const o = await createOrder(t.sandbox, { expected_output_amount: "5.00", fiat: "EUR", ...URLS });
    const r = await action(t.sandbox, o.identifier, { action: "choose_currency", currency: "USDC_ERC20" });
    expect(r.status).toBe(409);
    expect(r.json.detail).toContain("minimum");
  });

  it("bad action bodies are 400 and unknown orders 404", async () => {
    const o = await variantA("BTC");
    expect((await action(t.sandbox, o.identifier, { action: "explode" })).status).toBe(400);
    expect((await action(t.sandbox, o.identifier, { action: "pay", amount: "-1" })).status).toBe(400);
    expect((await action(t.sandbox, o.identifier, { action: "pay", amount: "0.000000001" })).status).toBe(400);
    expect((await action(t.sandbox, "0b7c2b8e-5f0e-4a4c-9d1e-6f3a2b1c0d9e", { action: "confirm" })).status).toBe(404);
  });

  it("pays a given decimal amount", async () => {
    const o = await variantA("BTC");
    const paid = await act(o.identifier, { action: "pay", amount: "0.0001" });
    expect(paid.unconfirmed_amount).toBe(0.0001);
  });
});

describe("the ticker", () => {
  it("expires orders on its own: the EX webhook arrives without anyone reading the order", async () => {
    const ticking = await startTestSandbox({ tickMs: 20 });
    const receiver = await startReceiver();
    try {
      const c = client(ticking.sandbox);
      await c.control("POST", `/devices/${ticking.sandbox.demo.deviceKey}/settings`, { notification_url: receiver.url });
      const o = await createOrder(ticking.sandbox, { expected_output_amount: 10, input_currency: "XRP", fiat: "EUR" });
      ticking.clock.advance(15 * MINUTE);
      await vi.waitFor(() => expect(receiver.received).toHaveLength(1), { timeout: 10_000, interval: 20 });
      const body = JSON.parse(receiver.received[0]?.rawBody ?? "{}");
      expect(body).toMatchObject({ identifier: o.identifier, status: "EX" });
    } finally {
      await receiver.close();
      await ticking.stop();
    }
  });
});
