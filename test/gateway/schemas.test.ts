import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createOrderRequestSchema,
  createOrderResponseSchema,
  currenciesResponseSchema,
  deviceCreateResponseSchema,
  deviceKeySchema,
  gatewayOrderSchema,
  gatewayWebhookPayloadSchema,
  hasCryptoPaymentData,
  jsonAmountSchema,
  listedOrderByReference,
  orderInfoResponseSchema,
  ordersListResponseSchema,
  secretKeyHexSchema,
} from "../../app/gateway/schemas";
import { COUNTRY_CODES } from "../../app/gateway/country-codes";
import { JsonNumber, parseGatewayJson } from "../../app/gateway/json-numbers";
import { EMAILS_LEFT_OUT_THOUGH_VALID, EMAILS_THE_GATEWAY_REFUSES, EMAILS_THE_GATEWAY_TAKES } from "./support/email-cases";
import { fixtureBody, fixtureBodyPlain, fixtureJson } from "./support/fixtures";

describe("gateway examples parse through their schemas", () => {
  it.each(["currencies.response.docs-b4bit.json", "currencies.sandbox.2024-01.BGMiralles.json"])("%s", (name) => {
    const { currencies, unreadable } = currenciesResponseSchema.parse(fixtureBody(name));
    expect(unreadable).toEqual([]);
    expect(currencies.length).toBeGreaterThan(0);
    for (const c of currencies) expect(typeof c.min_amount).toBe("string");
  });

  it("currencies keep a null max_amount as no limit", () => {
    const [first] = currenciesResponseSchema.parse(fixtureBody("currencies.response.docs-b4bit.json")).currencies;
    expect(first?.max_amount).toBeNull();
    expect(first?.min_amount).toBe("1.00");
  });

  it("device creation", () => {
    const device = deviceCreateResponseSchema.parse(fixtureBody("device-create.docs-b4bit.json"));
    expect(device).toEqual({ name: "caja-tienda-3", identifier: "abcdef12-3456-7890-abcd-ef1234567890" });
  });

  it("order creation parses as the with-input_currency shape, amounts as exact strings", () => {
    const created = createOrderResponseSchema.parse(fixtureBody("orders-create.response.eth_test3.2023-07.gpylypchuk.json"));
    expect(hasCryptoPaymentData(created)).toBe(true);
    if (!hasCryptoPaymentData(created)) return;
    expect(created.input_currency).toBe("ETH_TEST3");
    expect(created.expected_input_amount).toBe("0.0034022");
    expect(created.rate).toBe("1469.64");
    expect(created.tag_memo).toBe("");
  });

  it("order info is one order with its transaction", () => {
    const order = orderInfoResponseSchema.parse(fixtureBody("orders-info.response.docs-b4bit.json"));
    expect(order.status).toMatchObject({ known: true, code: "CO" });
    expect(order.fiat_amount).toBe("125.02");
    expect(order.percentage).toBe("100.0");
    expect(order.unconfirmed_amount).toBe("0.0");
    expect(order.merchant_device_id).toBe(42);
    expect(order.transactions).toEqual([
      { confirmed: true, currency: "BTC", amount: "0.00245", tx_hash: "abc123...", block: 834212, created_at: "2026-04-17T10:08:30+02:00" },
    ]);
  });

  it("order info recorded from the gateway's test environment in 2022 (an older Payment shape) is one order", () => {
    const order = orderInfoResponseSchema.parse(fixtureBody("orders-info.response.eth_test.2022-10.Naza2021.json"));
    expect(order).toMatchObject({
      identifier: "ae875895-8040-4d21-823f-72669e26ecca",
      status: { known: true, code: "PE" },
      fiat_amount: "10.99",
      fiat: "EUR",
      crypto_amount: "0.0079758",
      confirmed_amount: "0.0",
      currency_id: "ETH_TEST",
      edited_at: "2022-10-06T15:01:02.126543+02:00",
      transactions: [],
    });
    // Not in that shape: not reported, never a made-up value (no amount reads as 0).
    expect(order).toMatchObject({ received_amount: null, percentage: null, merchant_device: null, url_standby: null, internal_data: null });
    expect(order.tag_memo).toBeUndefined();
  });

  it("orders list NR example has null crypto fields", () => {
    const { orders, unreadable } = ordersListResponseSchema.parse(fixtureBody("orders-list.response.docs-b4bit.json"));
    expect(unreadable).toEqual([]);
    const [order] = orders;
    expect(order).toBeDefined();
    expect(order?.status).toMatchObject({ known: true, code: "NR" });
    expect(order?.crypto_amount).toBeNull();
    expect(order?.currency_id).toBeNull();
    expect(order?.address).toBeNull();
    expect(order?.expired_time).toBeNull();
    expect(order?.tag_memo).toBe("");
    expect(order?.transactions).toEqual([]);
  });

  it("examples read with plain JSON.parse parse too (amounts in shortest form)", () => {
    const order = orderInfoResponseSchema.parse(fixtureBodyPlain("orders-info.response.docs-b4bit.json"));
    expect(order.percentage).toBe("100");
    expect(order.fiat_amount).toBe("125.02");
  });

  it("the webhook test vector's body parses as a webhook payload", () => {
    const vector = fixtureJson<{ raw_body: string }>("webhook.test-vector.bitnovo-gitbook.json");
    const payload = gatewayWebhookPayloadSchema.parse(parseGatewayJson(vector.raw_body));
    expect(payload.identifier).toBe("1040095a-737d-41a2-a2e1-d031d19ec8cd");
    expect(payload.status).toMatchObject({ known: true, code: "AC" });
    expect(payload.crypto_amount).toBe("1.21461894");
    expect(payload.fiat_amount).toBe("100.0");
    expect(payload.currency).toBe("DASH");
  });
});

describe("response amounts", () => {
  it("keep the JSON text of the number, never a float", () => {
    const parsed = parseGatewayJson('{"a": 0.1000000000000000055511, "b": 1e-7, "c": 12345678901234567890.123456789}') as Record<string, unknown>;
    expect(jsonAmountSchema.parse(parsed.a)).toBe("0.1000000000000000055511");
    expect(jsonAmountSchema.parse(parsed.b)).toBe("0.0000001");
    expect(jsonAmountSchema.parse(parsed.c)).toBe("12345678901234567890.123456789");
  });

  it("reject negative and non-finite amounts", () => {
    expect(jsonAmountSchema.safeParse(new JsonNumber("-1.5")).success).toBe(false);
    expect(jsonAmountSchema.safeParse(Number.POSITIVE_INFINITY).success).toBe(false);
    expect(jsonAmountSchema.safeParse("1.5").success).toBe(false);
  });

  it("refuse an amount that would take more digits to write out than any amount has, without writing it out", () => {
    // Written out, each would be a string of a billion digits: the process would run out of memory.
    for (const text of ["1e-1000000000", "1E+1000000000", "9.5e400", "1e-81", "1e-9000000000000001"]) {
      const parsed = jsonAmountSchema.safeParse((parseGatewayJson(`{"a": ${text}}`) as { a: unknown }).a);
      expect(parsed.success, text).toBe(false);
      expect(parsed.error?.issues[0]?.message, text).toMatch(/digits/);
    }
    expect(jsonAmountSchema.safeParse(new JsonNumber(`0.${"1".repeat(80)}`)).success).toBe(false);
    // The smallest units of the coins the gateway lists (wei, satoshi) are far inside the bound.
    expect(jsonAmountSchema.parse(new JsonNumber("1e-18"))).toBe("0.000000000000000001");
    expect(jsonAmountSchema.parse(new JsonNumber("1.5E+3"))).toBe("1500");
    expect(jsonAmountSchema.parse(new JsonNumber(`0.${"1".repeat(60)}`))).toBe(`0.${"1".repeat(60)}`);
  });
});

describe("order schema", () => {
  const base = fixtureBody("orders-info.response.docs-b4bit.json") as Record<string, unknown>[];
  const order = base[0] as Record<string, unknown>;

  it("keeps an unknown status code flagged instead of failing", () => {
    const parsed = gatewayOrderSchema.parse({ ...order, status: "RF" });
    expect(parsed.status).toEqual({ known: false, code: "RF" });
  });

  it.each([
    ["identifier", "not-a-uuid"],
    ["fiat", "XYZ"],
    ["fiat_amount", "125.02"],
    ["created_at", "yesterday"],
    ["merchant_device_id", 4.5],
    ["transactions", null],
    ["url_ok", "javascript:alert(1)"],
  ])("rejects a bad %s", (field, value) => {
    const result = gatewayOrderSchema.safeParse({ ...order, [field]: value });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path[0]).toBe(field);
  });

  it.each(["received_amount", "percentage", "merchant_device_id", "merchant_device", "url_ok", "url_ko", "url_standby", "good_fee", "safe", "rbf", "language", "notes", "internal_data"])(
    "reads an order without %s (a field only shown) as not reporting it: null",
    (field) => {
      const { [field]: _left, ...rest } = order;
      const parsed = gatewayOrderSchema.safeParse(rest);
      expect(parsed.success && parsed.data[field as keyof typeof parsed.data]).toBeNull();
    },
  );

  it("keeps a missing tag_memo apart from an empty one: not reported, rather than none", () => {
    const { tag_memo: _left, ...rest } = order;
    expect(gatewayOrderSchema.parse(rest).tag_memo).toBeUndefined();
    expect(gatewayOrderSchema.parse(order).tag_memo).toBe("");
  });

  it("a field only shown must still be well formed when present", () => {
    expect(gatewayOrderSchema.safeParse({ ...order, percentage: "100.0" }).success).toBe(false);
    expect(gatewayOrderSchema.safeParse({ ...order, received_amount: -1 }).success).toBe(false);
  });

  it.each(["identifier", "reference", "status", "fiat_amount", "fiat", "crypto_amount", "unconfirmed_amount", "confirmed_amount", "currency_id", "address", "edited_at", "expired_time", "transactions"])(
    "refuses an order without %s, which settling a payment or finding its order relies on",
    (field) => {
      const { [field]: _left, ...rest } = order;
      const result = gatewayOrderSchema.safeParse(rest);
      expect(result.error?.issues[0]?.path).toEqual([field]);
    },
  );

  it("order info with two orders is not one order", () => {
    expect(orderInfoResponseSchema.safeParse([order, order]).success).toBe(false);
    expect(orderInfoResponseSchema.safeParse([]).success).toBe(false);
  });
});

describe("orders listing", () => {
  const documented = (fixtureBody("orders-info.response.docs-b4bit.json") as Record<string, unknown>[])[0]!;
  const recorded = (fixtureBody("orders-info.response.eth_test.2022-10.Naza2021.json") as Record<string, unknown>[])[0]!;
  const broken = { ...documented, identifier: "5f2b8c1e-3d4a-4b6c-8e9f-0a1b2c3d4e5f", reference: "shop-7", fiat: "XYZ" };

  it("reads every order of a listing that mixes the documented and the 2022 shapes", () => {
    const listing = ordersListResponseSchema.parse([documented, recorded]);
    expect(listing.orders.map((o) => o.identifier)).toEqual([documented.identifier, recorded.identifier]);
    expect(listing.unreadable).toEqual([]);
  });

  it("sets an order it cannot read aside, with its identifier and reference, and reads the others", () => {
    const listing = ordersListResponseSchema.parse([documented, broken, "not an order", { ...recorded, identifier: 7, reference: 3 }]);
    expect(listing.orders.map((o) => o.identifier)).toEqual([documented.identifier]);
    expect(listing.unreadable).toEqual([
      { identifier: broken.identifier, reference: "shop-7", path: ["fiat"], reason: expect.stringContaining("Invalid enum value") },
      { identifier: null, reference: undefined, path: [], reason: expect.any(String) },
      { identifier: null, reference: undefined, path: ["identifier"], reason: expect.any(String) },
    ]);
  });

  it("refuses an answer that is not a list", () => {
    expect(ordersListResponseSchema.safeParse({ detail: "maintenance" }).success).toBe(false);
  });

  describe("finding an order by its reference", () => {
    const readable = { ...documented, reference: "shop-1" };

    it("finds the readable order with that reference, and proves there is none when every element was read", () => {
      const listing = ordersListResponseSchema.parse([documented, readable]);
      expect(listedOrderByReference(listing, "shop-1")).toMatchObject({ reference: "shop-1" });
      expect(listedOrderByReference(listing, "shop-2")).toBeNull();
      expect(listedOrderByReference(listing, "shop-1", (order) => order.currency_id === null)).toBeNull();
    });

    it("cannot tell when an element it could not read has that reference, or does not say", () => {
      expect(listedOrderByReference(ordersListResponseSchema.parse([documented, broken]), "shop-7")).toBe("unknown");
      expect(listedOrderByReference(ordersListResponseSchema.parse([documented, { fiat: "EUR" }]), "shop-7")).toBe("unknown");
    });

    it("an unreadable element with another reference, or none, does not hide the answer", () => {
      expect(listedOrderByReference(ordersListResponseSchema.parse([broken]), "shop-2")).toBeNull();
      expect(listedOrderByReference(ordersListResponseSchema.parse([{ ...broken, reference: null }]), "shop-7")).toBeNull();
      expect(listedOrderByReference(ordersListResponseSchema.parse([broken, readable]), "shop-1")).toMatchObject({ reference: "shop-1" });
    });
  });
});

describe("create-order response", () => {
  const withoutCurrency = {
    identifier: "9d060d1d-16c9-4e4d-90b4-07ff4e893b36",
    reference: "shop-1",
    web_url: "https://paytest.bitnovo.com/16c91dbc/",
    notes: null,
    fiat: "EUR",
    language: "ES",
  };

  it("parses the shape without input_currency", () => {
    const parsed = createOrderResponseSchema.parse(withoutCurrency);
    expect(hasCryptoPaymentData(parsed)).toBe(false);
  });

  it("reports a malformed crypto field instead of falling back to the short shape", () => {
    const result = createOrderResponseSchema.safeParse({ ...withoutCurrency, input_currency: "BTC", payment_uri: "bitcoin:x", address: "x", tag_memo: null, expected_input_amount: "oops", rate: 1 });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(["expected_input_amount"]);
  });
});

describe("webhook payload", () => {
  it("needs only a UUID identifier; drops malformed optional fields; keeps unknown keys", () => {
    const payload = gatewayWebhookPayloadSchema.parse({ identifier: "1040095a-737d-41a2-a2e1-d031d19ec8cd", status: 7, fiat_amount: "x", extra: "kept" });
    expect(payload.status).toBeUndefined();
    expect(payload.fiat_amount).toBeUndefined();
    expect(payload.extra).toBe("kept");
  });

  it("rejects a payload without a valid identifier", () => {
    expect(gatewayWebhookPayloadSchema.safeParse({ status: "CO" }).success).toBe(false);
    expect(gatewayWebhookPayloadSchema.safeParse({ identifier: "42" }).success).toBe(false);
  });
});

describe("branded identifiers", () => {
  it("trims a device key and refuses an empty or spaced one", () => {
    expect(deviceKeySchema.parse("  abc-123 \n")).toBe("abc-123");
    expect(deviceKeySchema.safeParse("   ").success).toBe(false);
    expect(deviceKeySchema.safeParse("ab c").success).toBe(false);
  });

  it("accepts only even-length hex secret keys", () => {
    expect(secretKeyHexSchema.safeParse("0a1B").success).toBe(true);
    expect(secretKeyHexSchema.safeParse("abc").success).toBe(false);
    expect(secretKeyHexSchema.safeParse("zz").success).toBe(false);
    expect(secretKeyHexSchema.safeParse("").success).toBe(false);
  });
});

describe("create-order request bounds", () => {
  const valid = { expected_output_amount: "10.00", input_currency: "BTC_TEST" };
  const accepts = (extra: Record<string, unknown>) => createOrderRequestSchema.safeParse({ ...valid, ...extra }).success;

  const stringBounds: [field: string, min: number, max: number][] = [
    ["language", 1, 6],
    ["notes", 0, 512],
    ["reference", 1, 256],
    ["internal_data", 1, 1024],
    ["full_name", 0, 48],
    ["phone_number", 0, 15],
    ["nif", 0, 12],
    ["home_address", 0, 256],
    ["address_number", 0, 56],
    ["address_additional", 0, 64],
    ["city", 0, 28],
    ["province", 0, 28],
    ["zip_code", 0, 12],
    ["input_currency", 1, 24],
  ];

  it.each(stringBounds)("%s accepts exactly %i..%i characters", (field, min, max) => {
    fc.assert(
      fc.property(fc.string({ minLength: min, maxLength: max }), (value) => accepts({ [field]: value })),
      { numRuns: 60 },
    );
    fc.assert(
      fc.property(fc.string({ minLength: max + 1, maxLength: max + 40 }), (value) => !accepts({ [field]: value })),
      { numRuns: 30 },
    );
    expect(accepts({ [field]: "x".repeat(max) })).toBe(true);
    expect(accepts({ [field]: "x".repeat(max + 1) })).toBe(false);
    if (min > 0) expect(accepts({ [field]: "" })).toBe(false);
  });

  it("expected_output_amount is a positive plain decimal string", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), fc.integer({ min: 0, max: 99 }), (units, cents) =>
        accepts({ expected_output_amount: `${units}.${String(cents).padStart(2, "0")}` }),
      ),
    );
    for (const bad of ["0", "0.00", "-1.00", "1e3", "1,00", " 1.00", "01.00", ".5", "1.", "", "NaN"]) {
      expect(accepts({ expected_output_amount: bad }), bad).toBe(false);
    }
    expect(accepts({ expected_output_amount: 10 })).toBe(false);
    expect(accepts({ expected_output_amount: "0.01" })).toBe(true);
  });

  it("expected_output_amount has at most 15 significant digits, which the gateway's float keeps exactly", () => {
    expect(accepts({ expected_output_amount: "1234567890123.45", fiat: "EUR" })).toBe(true);
    expect(accepts({ expected_output_amount: "12345678901234.56", fiat: "EUR" })).toBe(false);
    expect(accepts({ expected_output_amount: "100000000000000000000", fiat: "JPY" })).toBe(true); // 1 significant digit
    expect(accepts({ expected_output_amount: "1234567890123456", fiat: "JPY" })).toBe(false);
    expect(accepts({ expected_output_amount: "123456789012345", fiat: "JPY" })).toBe(true);
    expect(accepts({ expected_output_amount: "10.50", fiat: "EUR" })).toBe(true);
    const refused = createOrderRequestSchema.safeParse({ ...valid, expected_output_amount: "12345678901234.56", fiat: "EUR" });
    expect(refused.error?.issues.map((i) => i.message)).toContain("must have at most 15 significant digits (the gateway reads the amount as a float)");
  });

  it.each([...stringBounds.map(([field]) => field), "merchant_urlok", "merchant_urlko", "merchant_url_standby"])(
    "%s refuses a NUL character and a lone surrogate, which the gateway answers with a 400",
    (field) => {
      const base = field.startsWith("merchant_") ? "https://shop.example/ok" : "ab";
      expect(accepts({ [field]: base })).toBe(true);
      expect(accepts({ [field]: `${base}\u0000` })).toBe(false);
      expect(accepts({ [field]: `${base}\ud83d` })).toBe(false);
      expect(accepts({ [field]: `${base}\ude00` })).toBe(false);
    },
  );

  it("text fields take a paired surrogate (an emoji) and other control characters, as the gateway does", () => {
    expect(accepts({ full_name: "Ann \ud83d\ude00", notes: "line 1\nline 2\t." })).toBe(true);
    const refused = createOrderRequestSchema.safeParse({ ...valid, full_name: "Ann\u0000Lee" });
    expect(refused.error?.issues).toEqual([
      expect.objectContaining({ path: ["full_name"], message: "must not contain a NUL character or an unpaired surrogate (the gateway refuses both)" }),
    ]);
  });

  it("expected_output_amount may not carry more decimals than the fiat allows", () => {
    expect(accepts({ expected_output_amount: "10.005", fiat: "EUR" })).toBe(false);
    expect(accepts({ expected_output_amount: "10.005" })).toBe(false); // MXN by default
    expect(accepts({ expected_output_amount: "1500", fiat: "JPY" })).toBe(true);
    expect(accepts({ expected_output_amount: "1500.5", fiat: "JPY" })).toBe(false);
    expect(accepts({ expected_output_amount: "10.50", fiat: "EUR" })).toBe(true);
  });

  it("fiat is one of the 30 codes", () => {
    expect(accepts({ fiat: "EUR" })).toBe(true);
    expect(accepts({ fiat: "eur" })).toBe(false);
    expect(accepts({ fiat: "BTC" })).toBe(false);
  });

  it.each(["merchant_urlok", "merchant_urlko", "merchant_url_standby"])("%s must be an absolute http(s) URL", (field) => {
    expect(accepts({ [field]: "https://shop.example/pay/ok?x=1" })).toBe(true);
    expect(accepts({ [field]: "http://localhost:3000/ok" })).toBe(true);
    for (const bad of ["/pay/ok", "ftp://shop.example/ok", "javascript:alert(1)", "https://", "not a url", "https://shop.example/a b"]) {
      expect(accepts({ [field]: bad }), bad).toBe(false);
    }
  });

  it("merchant_url_standby may be null", () => {
    expect(accepts({ merchant_url_standby: null })).toBe(true);
    expect(accepts({ merchant_urlok: null })).toBe(false);
  });

  it("redirect URLs are required when input_currency is omitted", () => {
    const noCurrency = { expected_output_amount: "10.00" };
    const result = createOrderRequestSchema.safeParse(noCurrency);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path[0]).sort()).toEqual(["merchant_urlko", "merchant_urlok"]);
    expect(createOrderRequestSchema.safeParse({ ...noCurrency, merchant_urlok: "https://a.example/ok", merchant_urlko: "https://a.example/ko" }).success).toBe(true);
  });

  it("email_client is an email of at most 128 characters", () => {
    const email = (length: number) => `${"a".repeat(length - "@example.com".length)}@example.com`;
    expect(accepts({ email_client: email(128) })).toBe(true);
    expect(accepts({ email_client: email(129) })).toBe(false);
    expect(accepts({ email_client: "not-an-email" })).toBe(false);
  });

  it.each(EMAILS_THE_GATEWAY_TAKES)("email_client takes %s, as the gateway's EmailValidator does", (email) => {
    expect(accepts({ email_client: email })).toBe(true);
  });

  it.each([...EMAILS_THE_GATEWAY_REFUSES, ...EMAILS_LEFT_OUT_THOUGH_VALID])("email_client refuses %j", (email) => {
    expect(accepts({ email_client: email })).toBe(false);
  });

  it("country is an ISO 3166-1 alpha-2 code", () => {
    fc.assert(fc.property(fc.constantFrom(...COUNTRY_CODES), (code) => accepts({ country: code })));
    for (const bad of ["es", "ESP", "E", "XX", "ZZ", ""]) expect(accepts({ country: bad }), bad).toBe(false);
  });

  it("the country list has the 249 assigned codes, each a region the runtime knows", () => {
    expect(new Set(COUNTRY_CODES).size).toBe(249);
    const names = new Intl.DisplayNames(["en"], { type: "region", fallback: "none" });
    for (const code of COUNTRY_CODES) expect(names.of(code), code).toBeDefined();
  });

  it("unknown fields are refused rather than silently dropped", () => {
    expect(accepts({ refrence: "typo" })).toBe(false);
  });
});
