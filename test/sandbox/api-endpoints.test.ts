// Conformance of the five endpoints over HTTP: response shapes, authentication,
// the list's date range and order, info visibility across devices and
// merchants, trailing slashes, and unknown routes.
import { request } from "node:http";
import { beforeAll, describe, expect, it } from "vitest";
import { call, client, createOrder, gatewayExample, newMerchant, UUID_V4, sandboxForThisFile } from "./helpers.js";

const t = sandboxForThisFile({ limits: { perMinute: 10_000, perDay: 100_000, criticalPerMinute: 10_000, criticalPerDay: 100_000 } });
let api: ReturnType<typeof client>;
const URLS = { merchant_urlok: "https://shop.example/ok", merchant_urlko: "https://shop.example/ko" };

// Creation responses recorded from the real service: an ETH order of 2023 made without a
// language, and a BTC order of 2022 kept with its fields in the order they came.
const recordedEthCreate = gatewayExample("orders-create.response.eth_test3.2023-07.gpylypchuk.json").body;
const recordedBtcCreate = gatewayExample("orders-create.response.btc_test.2022-10.Naza2021.json").body;
const recordedInfo = gatewayExample("orders-info.response.eth_test.2022-10.Naza2021.json").body[0];
const documentedListed = gatewayExample("orders-list.response.docs-b4bit.json").body[0];

/** The form of a datetime the service writes: local time, microseconds when non-zero, and an offset. */
const DATE_TIME_FORM = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?[+-]\d{2}:\d{2}$/;

/** The wall-clock time in Madrid of an instant, as "YYYY-MM-DDTHH:MM:SS" (the service's server time zone). */
/** A GET sent as written (request target and header names untouched, as fetch would not), to the sandbox; its status. */
function rawGet(target: string, headers: Record<string, string>): Promise<number> {
  const origin = new URL(t.sandbox.origin);
  return new Promise<number>((resolve, reject) => {
    const req = request({ host: origin.hostname, port: origin.port, path: target, method: "GET", headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

function madridWallClock(ms: number): string {
  return new Intl.DateTimeFormat("sv-SE", {
    timeZone: "Europe/Madrid",
    year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23",
  })
    .format(new Date(ms))
    .replace(" ", "T");
}

/** Moves the sandbox clock to an instant. */
function setClock(iso: string): void {
  t.clock.advance(Date.parse(iso) - t.clock.now().getTime());
}

beforeAll(async () => {
  api = client(t.sandbox);
});

describe("GET /currencies", () => {
  it("lists the catalogue with decimal-string limits, icons served by the sandbox and network symbols", async () => {
    const r = await api.api("GET", "/currencies");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/application\/json/);
    const list = r.json as Array<Record<string, unknown>>;
    const symbols = list.map((c) => c.symbol);
    for (const s of ["BTC", "BTCL", "ETH", "USDC_ERC20", "USDC_POLYGON", "USDT_TRC20", "USDT_ERC20", "LTC", "BCH", "DOGE", "SOL", "XRP", "XLM", "ALGO"]) {
      expect(symbols).toContain(s);
    }
    for (const c of list) {
      expect(Object.keys(c)).toEqual(["symbol", "name", "min_amount", "max_amount", "image", "blockchain"]);
      expect(c.min_amount).toMatch(/^\d+\.\d{2}$/);
      expect(c.max_amount === null || /^\d+\.\d{2}$/.test(String(c.max_amount))).toBe(true);
      expect(String(c.symbol).length).toBeLessThanOrEqual(24);
      expect(String(c.name).length).toBeLessThanOrEqual(32);
      expect(String(c.blockchain).length).toBeGreaterThan(0);
    }
    expect(list.some((c) => c.max_amount === null)).toBe(true);
    const usdc = list.filter((c) => String(c.symbol).startsWith("USDC_"));
    expect(new Set(usdc.map((c) => c.blockchain)).size).toBeGreaterThan(1);
    const icon = await fetch(String(list[0]?.image));
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toBe("image/svg+xml");
    expect(await icon.text()).toMatch(/^<svg/);
  });

  it("is also served with a trailing slash", async () => {
    const r = await api.api("GET", "/currencies/");
    expect(r.status).toBe(200);
    expect(Array.isArray(r.json)).toBe(true);
  });
});

describe("authentication (X-Device-Id)", () => {
  const endpoints: Array<[string, string, unknown]> = [
    ["GET", "/currencies", undefined],
    ["POST", "/device/", { name: "x" }],
    ["GET", "/orders/", undefined],
    ["POST", "/orders/", { expected_output_amount: 5, input_currency: "BTC" }],
    ["GET", "/orders/info/0b7c2b8e-5f0e-4a4c-9d1e-6f3a2b1c0d9e", undefined],
  ];

  it.each(endpoints)("%s %s without a key is 403 with a detail", async (method, path, json) => {
    const r = await api.api(method, path, { key: null, json });
    expect(r.status).toBe(403);
    expect(typeof r.json.detail).toBe("string");
  });

  it.each(endpoints)("%s %s with an unknown key is 403", async (method, path, json) => {
    const r = await api.api(method, path, { key: "3f1c2a4b-5d6e-4f70-8a9b-0c1d2e3f4a5b", json });
    expect(r.status).toBe(403);
    expect(r.json.detail).not.toContain("3f1c2a4b");
  });

  it("rejects a key with surrounding whitespace that survives HTTP parsing, and a malformed key", async () => {
    const padded = await api.api("GET", "/currencies", { key: `\u00a0${t.sandbox.demo.deviceKey}` });
    expect(padded.status).toBe(403);
    const upper = await api.api("GET", "/currencies", { key: t.sandbox.demo.deviceKey.toUpperCase() });
    expect(upper.status).toBe(403);
    const garbage = await api.api("GET", "/currencies", { key: "not-a-key" });
    expect(garbage.status).toBe(403);
  });

  it("accepts the header name in any letter case", async () => {
    for (const name of ["x-device-id", "X-DEVICE-ID", "X-Device-Id"]) {
      const url = new URL(`${t.sandbox.baseUrl}/currencies`);
      expect(await rawGet(url.pathname, { [name]: t.sandbox.demo.deviceKey })).toBe(200);
    }
  });

  it("answers 403 for a disabled device and serves it again once re-enabled", async () => {
    const m = await newMerchant(t.sandbox, "Disable me");
    expect((await api.api("GET", "/currencies", { key: m.key })).status).toBe(200);
    await api.control("POST", `/devices/${m.key}/settings`, { enabled: false });
    const r = await api.api("GET", "/currencies", { key: m.key });
    expect(r.status).toBe(403);
    expect(r.json.detail).toMatch(/disabled/i);
    await api.control("POST", `/devices/${m.key}/settings`, { enabled: true });
    expect((await api.api("GET", "/currencies", { key: m.key })).status).toBe(200);
  });
});

describe("POST /device/", () => {
  it("creates a device of the same merchant whose new UUID v4 key works at once", async () => {
    const m = await newMerchant(t.sandbox, "Device maker");
    const r = await api.api("POST", "/device/", { key: m.key, json: { name: "caja-tienda-3" } });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json)).toEqual(["name", "identifier"]);
    expect(r.json.name).toBe("caja-tienda-3");
    expect(r.json.identifier).toMatch(UUID_V4);
    expect((await api.api("GET", "/currencies", { key: r.json.identifier })).status).toBe(200);
    const order = await createOrder(t.sandbox, { expected_output_amount: 5, input_currency: "BTC", fiat: "EUR" }, r.json.identifier);
    const seen = await api.api("GET", `/orders/info/${order.identifier}`, { key: m.key });
    expect(seen.status).toBe(200);
  });

  it("accepts a name of 1 and of 128 characters and rejects 129, blank and missing with 400", async () => {
    const m = await newMerchant(t.sandbox, "Device bounds");
    expect((await api.api("POST", "/device/", { key: m.key, json: { name: "a" } })).status).toBe(200);
    const long = await api.api("POST", "/device/", { key: m.key, json: { name: "n".repeat(128) } });
    expect(long.status).toBe(200);
    expect(long.json.name).toHaveLength(128);
    const over = await api.api("POST", "/device/", { key: m.key, json: { name: "n".repeat(129) } });
    expect(over.status).toBe(400);
    expect(over.json.name[0]).toMatch(/128 characters/);
    expect((await api.api("POST", "/device/", { key: m.key, json: { name: "  " } })).json).toEqual({ name: ["This field may not be blank."] });
    expect((await api.api("POST", "/device/", { key: m.key, json: {} })).json).toEqual({ name: ["This field is required."] });
  });

  it("is also reachable without the trailing slash", async () => {
    const m = await newMerchant(t.sandbox, "No slash");
    const r = await api.api("POST", "/device", { key: m.key, json: { name: "no-slash" } });
    expect(r.status).toBe(200);
    expect(r.json.identifier).toMatch(UUID_V4);
  });
});

describe("POST /orders/ responses", () => {
  it("variant B (no input_currency) answers only identifier, reference, web_url, notes, fiat, language", async () => {
    const r = await api.api("POST", "/orders/", { json: { expected_output_amount: 12.3, ...URLS } });
    expect(r.status).toBe(200);
    // The recorded fields in their recorded order, less the payment data.
    const shown = ["identifier", "reference", "web_url", "notes", "fiat", "language"];
    expect(Object.keys(r.json)).toEqual(Object.keys(recordedBtcCreate).filter((k) => shown.includes(k)));
    expect(r.json.identifier).toMatch(UUID_V4);
    expect(r.json.fiat).toBe("MXN");
    expect(r.json.web_url).toMatch(new RegExp(`^${t.sandbox.origin}/pay/[0-9a-f]{8}/$`));
  });

  it("gives an order created without a language the language the service gives it now (es, not SPEC.md's ES)", async () => {
    // The recorded 2023 order was created with no language field and came back with "es";
    // the documentation's orders show "es" as well.
    expect(recordedEthCreate.language).toBe("es");
    const r = await api.api("POST", "/orders/", { json: { expected_output_amount: 12.3, ...URLS } });
    expect(r.json.language).toBe(recordedEthCreate.language);
    const stored = (await api.api("GET", `/orders/info/${r.json.identifier}`)).json[0];
    expect(stored.language).toBe(recordedEthCreate.language);
  });

  it("variant A adds payment_uri, address, tag_memo, input_currency, expected_input_amount and rate", async () => {
    const r = await api.api("POST", "/orders/", {
      json: { expected_output_amount: "25.00", input_currency: "ETH", fiat: "EUR", reference: "ORD-1", notes: "Two mugs", language: "en" },
    });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json)).toEqual(Object.keys(recordedBtcCreate));
    expect(r.json.input_currency).toBe("ETH");
    // A coin without a tag/memo: "" in every recorded creation response, as in order reads.
    expect(r.json.tag_memo).toBe(recordedEthCreate.tag_memo);
    expect(r.json.tag_memo).toBe(recordedBtcCreate.tag_memo);
    expect(r.json.reference).toBe("ORD-1");
    expect(r.json.notes).toBe("Two mugs");
    expect(r.json.payment_uri).toBe(`ethereum:${r.json.address}?amount=${r.json.expected_input_amount}`);
    expect(typeof r.json.rate).toBe("number");
    expect(typeof r.json.expected_input_amount).toBe("number");
    // amounts are JSON numbers written the Python way
    expect(r.text).toMatch(/"rate":\d+\.\d+/);
  });

  it("answers tag_memo for XRP, XLM and ALGO, and a Lightning invoice with no address for BTCL", async () => {
    for (const symbol of ["XRP", "XLM", "ALGO"]) {
      const o = await createOrder(t.sandbox, { expected_output_amount: 10, input_currency: symbol, fiat: "EUR" });
      expect(o.tag_memo).toMatch(/^\d+$/);
      expect(o.payment_uri).toContain(o.tag_memo);
    }
    const ln = await createOrder(t.sandbox, { expected_output_amount: 10, input_currency: "BTCL", fiat: "EUR" });
    expect(ln.address).toBeNull();
    expect(ln.payment_uri).toMatch(/^lnbc\d+[munp]1/);
    expect(ln.tag_memo).toBe("");
  });

  it("writes a Bitcoin payment URI as the service does, with the order's rbf flag", async () => {
    const form = (uri: string) => uri.replace(/^bitcoin:[0-9a-z]+\?amount=\d+\.\d+(?=&|$)/, "bitcoin:<address>?amount=<amount>");
    const btc = await createOrder(t.sandbox, { expected_output_amount: 10, input_currency: "BTC", fiat: "EUR" });
    expect(form(btc.payment_uri)).toBe(form(recordedBtcCreate.payment_uri));
    expect(form(btc.payment_uri)).toBe("bitcoin:<address>?amount=<amount>&rbf=false");
    expect(btc.payment_uri).toContain(`bitcoin:${btc.address}?amount=`);
  });

  it("gives every order of every currency a unique address in that chain's shape", async () => {
    const shapes: Record<string, RegExp> = {
      BTC: /^bc1q/, LTC: /^ltc1q/, BCH: /^bitcoincash:q/, DOGE: /^D/, ETH: /^0x[0-9a-f]{40}$/, USDC_ERC20: /^0x[0-9a-f]{40}$/,
      USDC_POLYGON: /^0x[0-9a-f]{40}$/, USDT_ERC20: /^0x[0-9a-f]{40}$/, USDT_TRC20: /^T/, SOL: /^[1-9A-HJ-NP-Za-km-z]{43,44}$/,
      XRP: /^r/, XLM: /^G[A-Z2-7]{55}$/, ALGO: /^[A-Z2-7]{58}$/,
    };
    const seen = new Set<string>();
    for (const [symbol, shape] of Object.entries(shapes)) {
      for (let i = 0; i < 2; i++) {
        const o = await createOrder(t.sandbox, { expected_output_amount: 20, input_currency: symbol, fiat: "EUR" });
        expect(o.address).toMatch(shape);
        expect(seen.has(o.address)).toBe(false);
        seen.add(o.address);
      }
    }
  });

  it("accepts the legacy multipart/form-data encoding with every field as text", async () => {
    const form = new FormData();
    form.set("expected_output_amount", "7.50");
    form.set("input_currency", "LTC");
    form.set("fiat", "EUR");
    form.set("reference", "FORM-1");
    form.set("language", "es");
    form.set("country", "ES");
    form.set("order_type", "in");
    const r = await api.api("POST", "/orders/", { body: form });
    expect(r.status).toBe(200);
    expect(r.json.input_currency).toBe("LTC");
    expect(r.json.reference).toBe("FORM-1");
    const stored = (await api.api("GET", `/orders/info/${r.json.identifier}`)).json[0];
    expect(stored.fiat_amount).toBe(7.5);
    expect(stored.language).toBe("es");
  });

  it("reports multipart field errors the same way as JSON ones", async () => {
    const form = new FormData();
    form.set("expected_output_amount", "seven");
    form.set("input_currency", "LTC");
    const r = await api.api("POST", "/orders/", { body: form });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ expected_output_amount: ["A valid number is required."] });
  });

  it("accepts urlencoded bodies too and ignores unknown fields", async () => {
    const r = await api.api("POST", "/orders", {
      body: new URLSearchParams({ expected_output_amount: "3", input_currency: "DOGE", fiat: "EUR", order_type: "in", url_ok: "x" }),
    });
    expect(r.status).toBe(200);
    expect(r.json.input_currency).toBe("DOGE");
  });
});

describe("GET /orders/", () => {
  it("lists the device's orders in an inclusive UTC date range, newest first, and nothing of other devices", async () => {
    const m = await newMerchant(t.sandbox, "Lister");
    const other = await api.api("POST", "/device/", { key: m.key, json: { name: "other" } });
    const day = 86_400_000;
    const made: Array<{ id: string; at: string }> = [];
    // 2026-03-10T12:00Z is the test clock's start; walk through several days.
    for (const offsetDays of [0, 1, 0, 3]) {
      t.clock.advance(offsetDays * day);
      const o = await createOrder(t.sandbox, { expected_output_amount: 5, input_currency: "BTC", fiat: "EUR" }, m.key);
      made.push({ id: o.identifier, at: t.clock.now().toISOString() });
    }
    await createOrder(t.sandbox, { expected_output_amount: 5, input_currency: "BTC", fiat: "EUR" }, other.json.identifier);
    const days = made.map((x) => x.at.slice(0, 10).replaceAll("-", "/"));
    const all = await api.api("GET", `/orders/?start=${days[0]}&end=${days[3]}`, { key: m.key });
    expect(all.status).toBe(200);
    expect(all.json.map((o: { identifier: string }) => o.identifier)).toEqual(made.map((x) => x.id).reverse());
    const createdAt = all.json.map((o: { created_at: string }) => Date.parse(o.created_at));
    expect([...createdAt].sort((a, b) => b - a)).toEqual(createdAt);
    const single = await api.api("GET", `/orders/?start=${days[1]}&end=${days[1]}`, { key: m.key });
    expect(single.json.map((o: { identifier: string }) => o.identifier).sort()).toEqual([made[1]?.id, made[2]?.id].sort());
    const none = await api.api("GET", `/orders/?start=${days[3]}&end=${days[0]}`, { key: m.key });
    expect(none.json).toEqual([]);
    const paged = await api.api("GET", `/orders/?start=${days[0]}&end=${days[3]}&page=2&items_per_page=1`, { key: m.key });
    expect(paged.json).toHaveLength(4);
  });

  it("defaults to the last 7 days (today included)", async () => {
    const m = await newMerchant(t.sandbox, "Default range");
    const old = await createOrder(t.sandbox, { expected_output_amount: 5, input_currency: "BTC", fiat: "EUR" }, m.key);
    t.clock.advance(8 * 86_400_000);
    const recent = await createOrder(t.sandbox, { expected_output_amount: 5, input_currency: "BTC", fiat: "EUR" }, m.key);
    const r = await api.api("GET", "/orders/", { key: m.key });
    const ids = r.json.map((o: { identifier: string }) => o.identifier);
    expect(ids).toContain(recent.identifier);
    expect(ids).not.toContain(old.identifier);
    t.clock.advance(-1 * 86_400_000);
    const r2 = await api.api("GET", "/orders/", { key: m.key });
    expect(r2.json.map((o: { identifier: string }) => o.identifier)).toContain(old.identifier);
  });

  it.each(["2026-03-01", "2026/13/01", "2026/02/30", "yesterday", "2026/3/1"])("answers 400 with a detail for start=%s", async (bad) => {
    const r = await api.api("GET", `/orders/?start=${encodeURIComponent(bad)}`);
    expect(r.status).toBe(400);
    expect(r.json.detail).toContain("YYYY/MM/DD");
    const r2 = await api.api("GET", `/orders/?end=${encodeURIComponent(bad)}`);
    expect(r2.status).toBe(400);
  });

  it("returns every Payment field", async () => {
    const o = await createOrder(t.sandbox, { expected_output_amount: 5, ...URLS });
    const list = (await api.api("GET", "/orders/")).json as Array<Record<string, unknown>>;
    const row = list.find((x) => x.identifier === o.identifier);
    expect(Object.keys(row ?? {}).sort()).toEqual(
      [
        "identifier", "reference", "created_at", "edited_at", "status", "fiat_amount", "fiat", "crypto_amount", "unconfirmed_amount",
        "confirmed_amount", "received_amount", "currency_id", "merchant_device_id", "merchant_device", "address", "tag_memo", "url_ok",
        "url_ko", "url_standby", "expired_time", "good_fee", "safe", "rbf", "percentage", "language", "notes", "internal_data", "transactions",
      ].sort(),
    );
    // In the documented listing's order, which the recorded order of 2022 shares for the fields it has.
    expect(Object.keys(row ?? {})).toEqual(Object.keys(documentedListed));
    const shared = Object.keys(recordedInfo).filter((k) => k !== "fiat");
    expect(Object.keys(row ?? {}).filter((k) => shared.includes(k))).toEqual(shared);
    const info = (await api.api("GET", `/orders/info/${o.identifier}`)).json[0];
    expect(Object.keys(info)).toEqual(Object.keys(documentedListed));
    expect(row).toMatchObject({
      status: "NR", crypto_amount: null, currency_id: null, address: null, tag_memo: "", expired_time: null, percentage: 0,
      unconfirmed_amount: 0, confirmed_amount: 0, received_amount: 0, transactions: [], merchant_device: "Demo device",
      url_ok: URLS.merchant_urlok, url_ko: URLS.merchant_urlko, url_standby: null,
    });
    expect(recordedInfo.created_at).toMatch(DATE_TIME_FORM);
    expect(row?.created_at).toMatch(DATE_TIME_FORM);
    expect(row?.created_at).not.toMatch(/(Z|\+00:00)$/);
    const createdMs = Date.parse(String(row?.created_at));
    expect(String(row?.created_at).slice(0, 19)).toBe(madridWallClock(createdMs));
    expect(Number.isInteger(row?.merchant_device_id)).toBe(true);
  });

  it("writes datetimes in Madrid time with that day's offset, and still lists by the UTC date", async () => {
    const m = await newMerchant(t.sandbox, "Night owl");
    // Saturday 23:30 UTC is already Sunday 00:30 in Madrid (winter time, +01:00).
    setClock("2026-03-28T23:30:00.000Z");
    const night = await createOrder(t.sandbox, { expected_output_amount: 5, input_currency: "BTC", fiat: "EUR" }, m.key);
    const nightRead = (await api.api("GET", `/orders/info/${night.identifier}`, { key: m.key })).json[0];
    expect(nightRead.created_at).toBe("2026-03-29T00:30:00+01:00");
    expect(nightRead.edited_at).toBe(nightRead.created_at);
    expect(Date.parse(nightRead.expired_time) - Date.parse(nightRead.created_at)).toBeGreaterThan(0);
    expect(nightRead.expired_time).toMatch(DATE_TIME_FORM);
    // Summer time starts that Sunday at 01:00 UTC: +02:00 from then on, like the recorded order of October.
    setClock("2026-03-29T12:00:00.250Z");
    const noon = await createOrder(t.sandbox, { expected_output_amount: 5, input_currency: "BTC", fiat: "EUR" }, m.key);
    const noonRead = (await api.api("GET", `/orders/info/${noon.identifier}`, { key: m.key })).json[0];
    expect(noonRead.created_at).toBe("2026-03-29T14:00:00.250000+02:00");
    expect(recordedInfo.created_at.slice(-6)).toBe(noonRead.created_at.slice(-6));
    // The range is in UTC dates (SPEC.md), whatever the local date the datetime shows.
    const ids = async (day: string) =>
      (await api.api("GET", `/orders/?start=${day}&end=${day}`, { key: m.key })).json.map((o: { identifier: string }) => o.identifier);
    expect(await ids("2026/03/28")).toEqual([night.identifier]);
    expect(await ids("2026/03/29")).toEqual([noon.identifier]);
  });
});

describe("GET /orders/info/{identifier}", () => {
  it("answers a one-element array, visible to every device of the merchant and to no other merchant", async () => {
    const m = await newMerchant(t.sandbox, "Owner");
    const sibling = (await api.api("POST", "/device/", { key: m.key, json: { name: "sibling" } })).json.identifier as string;
    const stranger = await newMerchant(t.sandbox, "Stranger");
    const o = await createOrder(t.sandbox, { expected_output_amount: 5, input_currency: "BTC", fiat: "EUR" }, m.key);
    const own = await api.api("GET", `/orders/info/${o.identifier}`, { key: m.key });
    expect(own.status).toBe(200);
    expect(own.json).toHaveLength(1);
    expect(own.json[0].identifier).toBe(o.identifier);
    const viaSibling = await api.api("GET", `/orders/info/${o.identifier}/`, { key: sibling });
    expect(viaSibling.status).toBe(200);
    expect(viaSibling.json[0].identifier).toBe(o.identifier);
    const listOfSibling = await api.api("GET", "/orders/", { key: sibling });
    expect(listOfSibling.json).toEqual([]);
    const foreign = await api.api("GET", `/orders/info/${o.identifier}`, { key: stranger.key });
    expect(foreign.status).toBe(404);
    expect(typeof foreign.json.detail).toBe("string");
  });

  it("answers 404 with a detail for an unknown or malformed identifier", async () => {
    for (const id of ["0b7c2b8e-5f0e-4a4c-9d1e-6f3a2b1c0d9e", "nope", "%27%20OR%201%3D1", "%E0%A4%A"]) {
      const r = await api.api("GET", `/orders/info/${id}`);
      expect(r.status).toBe(404);
      expect(r.json.detail).toMatch(/identifier/);
    }
  });
});

describe("routing", () => {
  it("answers 404 for an unknown route and 405 for a wrong method", async () => {
    expect((await api.api("GET", "/nothing/here/")).status).toBe(404);
    const r = await api.api("DELETE", "/orders/");
    expect(r.status).toBe(405);
    expect(r.json.detail).toContain("DELETE");
  });

  // A request target that starts with "//" is a path (RFC 9112's origin-form), not a host: it is
  // routed by that whole path, so it is answered as any unknown path is, never with a 500 and never
  // by the route its tail names.
  for (const path of ["//", "//a:b/", "//x:99999/pay", "//api/v1/currencies", "//gateway.example/api/v1/currencies", "//gateway.example/sandbox/clock"]) {
    it(`answers the path ${JSON.stringify(path)} as an unknown path`, async () => {
      const unknown = await call(t.sandbox.origin, "GET", "/no/such/path", { key: t.sandbox.demo.deviceKey });
      const r = await call(t.sandbox.origin, "GET", path, { key: t.sandbox.demo.deviceKey });
      expect([r.status, r.headers.get("content-type"), r.text]).toEqual([404, unknown.headers.get("content-type"), unknown.text]);
    });
  }

  it("routes an absolute-form request target by its path", async () => {
    expect(await rawGet("http://gateway.example/api/v1/currencies", { "X-Device-Id": t.sandbox.demo.deviceKey })).toBe(200);
  });

  it("reports unreadable bodies as 400/415, never 500", async () => {
    const badJson = await call(t.sandbox.origin, "POST", "/api/v1/orders/", {
      key: t.sandbox.demo.deviceKey,
      body: "{not json",
      headers: { "Content-Type": "application/json" },
    });
    expect(badJson.status).toBe(400);
    expect(badJson.json.detail).toMatch(/JSON parse error/);
    const list = await api.api("POST", "/orders/", { json: [1, 2] });
    expect(list.status).toBe(400);
    expect(list.json.non_field_errors[0]).toMatch(/Expected a dictionary, but got list/);
    const text = await call(t.sandbox.origin, "POST", "/api/v1/orders/", {
      key: t.sandbox.demo.deviceKey,
      body: "amount=1",
      headers: { "Content-Type": "text/plain" },
    });
    expect(text.status).toBe(415);
  });
});
