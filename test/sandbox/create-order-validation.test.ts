// POST /orders/ validation: every field at its bound and one past it (400,
// DRF-style body), each 404 cause with its detail, amount limits converted
// into the order's fiat, and no 500 for any body.
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { EMAILS_THE_GATEWAY_REFUSES, EMAILS_THE_GATEWAY_TAKES } from "../gateway/support/email-cases.js";
import { client, sandboxForThisFile } from "./helpers.js";

const t = sandboxForThisFile();
let api: ReturnType<typeof client>;

beforeAll(async () => {
  api = client(t.sandbox);
});

const BASE = { expected_output_amount: "10.00", input_currency: "BTC", fiat: "EUR" };

function emailOfLength(n: number): string {
  const domain = "@example.com";
  return `${"a".repeat(n - domain.length)}${domain}`;
}

const TEXT_BOUNDS: Array<[field: string, max: number, min: number]> = [
  ["language", 6, 1],
  ["notes", 512, 0],
  ["reference", 256, 1],
  ["internal_data", 1024, 1],
  ["full_name", 48, 0],
  ["phone_number", 15, 0],
  ["nif", 12, 0],
  ["home_address", 256, 0],
  ["address_number", 56, 0],
  ["address_additional", 64, 0],
  ["city", 28, 0],
  ["province", 28, 0],
  ["zip_code", 12, 0],
];

describe("field bounds (400 with {field: [message]})", () => {
  it.each(TEXT_BOUNDS)("%s accepts %i characters and rejects one more", async (field, max) => {
    const ok = await api.api("POST", "/orders/", { json: { ...BASE, [field]: "x".repeat(max) } });
    expect(ok.status).toBe(200);
    const over = await api.api("POST", "/orders/", { json: { ...BASE, [field]: "x".repeat(max + 1) } });
    expect(over.status).toBe(400);
    expect(over.json).toEqual({ [field]: [`Ensure this field has no more than ${max} characters.`] });
  });

  it.each(TEXT_BOUNDS.filter(([, , min]) => min === 1))("%s rejects a blank value (minimum 1)", async (field) => {
    const r = await api.api("POST", "/orders/", { json: { ...BASE, [field]: "" } });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ [field]: ["This field may not be blank."] });
  });

  it.each(EMAILS_THE_GATEWAY_TAKES)("email_client takes %s, as Django's EmailValidator does", async (email) => {
    expect((await api.api("POST", "/orders/", { json: { ...BASE, email_client: email } })).status).toBe(200);
  });

  it.each(EMAILS_THE_GATEWAY_REFUSES)("email_client refuses %j, as Django's EmailValidator does", async (email) => {
    const r = await api.api("POST", "/orders/", { json: { ...BASE, email_client: email } });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ email_client: ["Enter a valid email address."] });
  });

  it("counts characters, not bytes", async () => {
    const r = await api.api("POST", "/orders/", { json: { ...BASE, city: "ñ".repeat(28) } });
    expect(r.status).toBe(200);
  });

  it("email_client accepts 128 characters, rejects 129 and a malformed address", async () => {
    expect((await api.api("POST", "/orders/", { json: { ...BASE, email_client: emailOfLength(128) } })).status).toBe(200);
    const over = await api.api("POST", "/orders/", { json: { ...BASE, email_client: emailOfLength(129) } });
    expect(over.status).toBe(400);
    expect(over.json.email_client).toEqual(["Ensure this field has no more than 128 characters."]);
    const bad = await api.api("POST", "/orders/", { json: { ...BASE, email_client: "shopper@" } });
    expect(bad.json).toEqual({ email_client: ["Enter a valid email address."] });
  });

  it("country takes ISO 3166 alpha-2 codes only", async () => {
    expect((await api.api("POST", "/orders/", { json: { ...BASE, country: "ES" } })).status).toBe(200);
    const long = await api.api("POST", "/orders/", { json: { ...BASE, country: "ESP" } });
    expect(long.json).toEqual({ country: ["Ensure this field has no more than 2 characters."] });
    const unknown = await api.api("POST", "/orders/", { json: { ...BASE, country: "ZZ" } });
    expect(unknown.json).toEqual({ country: ['"ZZ" is not a valid choice.'] });
  });

  it("fiat is one of the listed codes (letter case included) and defaults to MXN", async () => {
    for (const fiat of ["EUR", "USD", "JPY", "UYU"]) {
      expect((await api.api("POST", "/orders/", { json: { ...BASE, expected_output_amount: 500, fiat } })).status).toBe(200);
    }
    expect((await api.api("POST", "/orders/", { json: { ...BASE, fiat: "XYZ" } })).json).toEqual({ fiat: ['"XYZ" is not a valid choice.'] });
    expect((await api.api("POST", "/orders/", { json: { ...BASE, fiat: "eur" } })).status).toBe(400);
    const def = await api.api("POST", "/orders/", { json: { expected_output_amount: 10, input_currency: "BTC" } });
    expect(def.json.fiat).toBe("MXN");
  });

  it("expected_output_amount must be a number with at most 2 decimals and 12 digits, above zero", async () => {
    const cases: Array<[unknown, string]> = [
      ["ten", "A valid number is required."],
      [true, "A valid number is required."],
      ["1.234", "Ensure that there are no more than 2 decimal places."],
      ["12345678901.00", "Ensure that there are no more than 12 digits in total."],
      [0, "Ensure this value is greater than or equal to 0.01."],
      [-5, "Ensure this value is greater than or equal to 0.01."],
    ];
    for (const [value, message] of cases) {
      const r = await api.api("POST", "/orders/", { json: { ...BASE, expected_output_amount: value } });
      expect(r.status).toBe(400);
      expect(r.json).toEqual({ expected_output_amount: [message] });
    }
    const missing = await api.api("POST", "/orders/", { json: { input_currency: "BTC" } });
    expect(missing.json).toEqual({ expected_output_amount: ["This field is required."] });
    expect((await api.api("POST", "/orders/", { json: { ...BASE, expected_output_amount: "1234.56" } })).status).toBe(200);
  });

  it("merchant_url_standby must be a URL when given (400)", async () => {
    const r = await api.api("POST", "/orders/", { json: { ...BASE, merchant_url_standby: "later" } });
    expect(r.json).toEqual({ merchant_url_standby: ["Enter a valid URL."] });
    expect((await api.api("POST", "/orders/", { json: { ...BASE, merchant_url_standby: null } })).status).toBe(200);
  });

  it.each(TEXT_BOUNDS.map(([field]) => field))("%s refuses a NUL character, as DRF's ProhibitNullCharactersValidator does", async (field) => {
    const r = await api.api("POST", "/orders/", { json: { ...BASE, [field]: "a\u0000b" } });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ [field]: ["Null characters are not allowed."] });
  });

  it.each(TEXT_BOUNDS.map(([field]) => field))("%s refuses a lone surrogate, as DRF's ProhibitSurrogateCharactersValidator does", async (field) => {
    const r = await api.api("POST", "/orders/", { json: { ...BASE, [field]: "a\ud83d" } });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ [field]: ["Surrogate characters are not allowed: U+D83D."] });
  });

  it("names the first lone surrogate in upper-case hex, takes a paired one (an emoji), and reports every validator that fails", async () => {
    const low = await api.api("POST", "/orders/", { json: { ...BASE, city: "a\udc0ab\ud800" } });
    expect(low.json).toEqual({ city: ["Surrogate characters are not allowed: U+DC0A."] });
    const reversed = await api.api("POST", "/orders/", { json: { ...BASE, city: "\ude00\ud83d" } });
    expect(reversed.json).toEqual({ city: ["Surrogate characters are not allowed: U+DE00."] });
    expect((await api.api("POST", "/orders/", { json: { ...BASE, city: "Madrid \ud83d\ude00" } })).status).toBe(200);
    const all = await api.api("POST", "/orders/", { json: { ...BASE, zip_code: `\u0000${"1".repeat(12)}\udfff` } });
    expect(all.json).toEqual({
      zip_code: ["Ensure this field has no more than 12 characters.", "Null characters are not allowed.", "Surrogate characters are not allowed: U+DFFF."],
    });
    const device = await api.api("POST", "/device/", { json: { name: "till\u0000" } });
    expect(device.status).toBe(400);
    expect(device.json).toEqual({ name: ["Null characters are not allowed."] });
  });

  it("reports every bad field at once", async () => {
    const r = await api.api("POST", "/orders/", { json: { expected_output_amount: "x", fiat: "???", zip_code: "1".repeat(13) } });
    expect(Object.keys(r.json).sort()).toEqual(["expected_output_amount", "fiat", "zip_code"]);
  });
});

describe("404 causes, each with its detail", () => {
  it("an unknown input_currency", async () => {
    const r = await api.api("POST", "/orders/", { json: { ...BASE, input_currency: "NOPE" } });
    expect(r.status).toBe(404);
    expect(r.json.detail).toMatch(/Currency "NOPE" not found/);
  });

  it("a wrong-case input_currency, pointing at the right symbol", async () => {
    const r = await api.api("POST", "/orders/", { json: { ...BASE, input_currency: "usdc_polygon" } });
    expect(r.status).toBe(404);
    expect(r.json.detail).toMatch(/case-sensitive.*"USDC_POLYGON"/);
  });

  it("an amount below min_amount or above max_amount (EUR limits, bounds inclusive)", async () => {
    expect((await api.api("POST", "/orders/", { json: { ...BASE, expected_output_amount: "0.05" } })).status).toBe(200);
    const low = await api.api("POST", "/orders/", { json: { ...BASE, expected_output_amount: "0.04" } });
    expect(low.status).toBe(404);
    expect(low.json.detail).toBe("Amount 0.04 EUR is below the minimum amount of 0.05 EUR for BTC.");
    expect((await api.api("POST", "/orders/", { json: { ...BASE, expected_output_amount: "20000.00" } })).status).toBe(200);
    const high = await api.api("POST", "/orders/", { json: { ...BASE, expected_output_amount: "20000.01" } });
    expect(high.status).toBe(404);
    expect(high.json.detail).toBe("Amount 20000.01 EUR is above the maximum amount of 20000.00 EUR for BTC.");
    const noMax = await api.api("POST", "/orders/", { json: { ...BASE, input_currency: "USDC_POLYGON", expected_output_amount: "9999999999.99" } });
    expect(noMax.status).toBe(200);
  });

  it("compares the limits in the order's fiat (EUR limits converted at the simulated rate)", async () => {
    // BTC's 0.05 EUR minimum is 0.98 MXN at 19.50 MXN/EUR.
    expect((await api.api("POST", "/orders/", { json: { ...BASE, fiat: "MXN", expected_output_amount: "0.98" } })).status).toBe(200);
    const low = await api.api("POST", "/orders/", { json: { ...BASE, fiat: "MXN", expected_output_amount: "0.97" } });
    expect(low.status).toBe(404);
    expect(low.json.detail).toContain("0.98 MXN");
  });

  it("merchant_urlok or merchant_urlko missing when input_currency is omitted", async () => {
    const noOk = await api.api("POST", "/orders/", { json: { expected_output_amount: 10, merchant_urlko: "https://s.example/ko" } });
    expect(noOk.status).toBe(404);
    expect(noOk.json.detail).toBe("merchant_urlok is required when input_currency is omitted.");
    const noKo = await api.api("POST", "/orders/", { json: { expected_output_amount: 10, merchant_urlok: "https://s.example/ok" } });
    expect(noKo.json.detail).toBe("merchant_urlko is required when input_currency is omitted.");
    expect((await api.api("POST", "/orders/", { json: { ...BASE } })).status).toBe(200);
  });

  it.each(["ftp://s.example/ok", "not a url", "/relative/ok", "https://", "javascript:alert(1)"])(
    "a malformed redirect URL (%s), with or without input_currency",
    async (bad) => {
      const a = await api.api("POST", "/orders/", { json: { ...BASE, merchant_urlok: bad } });
      expect(a.status).toBe(404);
      expect(a.json.detail).toBe("merchant_urlok is not a valid absolute http(s) URL.");
      const b = await api.api("POST", "/orders/", {
        json: { expected_output_amount: 10, merchant_urlok: "https://s.example/ok", merchant_urlko: bad },
      });
      expect(b.status).toBe(404);
      expect(b.json.detail).toBe("merchant_urlko is not a valid absolute http(s) URL.");
    },
  );

  it("leaves nothing stored when a create is rejected", async () => {
    const before = (await api.api("GET", "/orders/")).json.length;
    await api.api("POST", "/orders/", { json: { ...BASE, input_currency: "NOPE" } });
    await api.api("POST", "/orders/", { json: { ...BASE, nif: "1".repeat(13) } });
    expect((await api.api("GET", "/orders/")).json.length).toBe(before);
  });
});

describe("robustness", () => {
  it("never answers 500, whatever the body holds", async () => {
    const anyValue = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: "binary", maxLength: 20 }),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }),
      fc.constantFrom("BTC", "XRP", "BTCL", "10.00", "https://s.example/ok", "EUR", ""),
    );
    const fields = [
      "expected_output_amount", "input_currency", "fiat", "language", "notes", "reference", "internal_data", "merchant_urlok",
      "merchant_urlko", "merchant_url_standby", "email_client", "country", "full_name", "zip_code",
    ];
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.constantFrom(...fields, "extra"), anyValue), async (body) => {
        const r = await api.api("POST", "/orders/", { json: body });
        expect([200, 400, 404]).toContain(r.status);
        expect(r.json).toBeTypeOf("object");
      }),
      { numRuns: 150 },
    );
  });
});
