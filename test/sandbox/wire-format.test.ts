// The sandbox's byte-level fidelity: Python json.dumps output, Python float
// repr, datetimes as the service writes them, and webhook signatures checked
// against the gateway's official vector.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { gatewayDateTime } from "../../sandbox/clock.js";
import { Dec } from "../../sandbox/decimal.js";
import { pyFloat, pythonFloatRepr, pythonJsonDumps } from "../../sandbox/python-json.js";
import { signWebhook } from "../../sandbox/webhook-signer.js";
import { gatewayExample } from "./helpers.js";

const vector = JSON.parse(
  readFileSync(new URL("../fixtures/gateway/webhook.test-vector.bitnovo-gitbook.json", import.meta.url), "utf8"),
) as { headers: { "X-NONCE": string; "X-SIGNATURE": string }; secret_hex: string; raw_body: string };

describe("webhook signing", () => {
  it("reproduces the official test vector's signature", () => {
    expect(signWebhook(vector.secret_hex, vector.headers["X-NONCE"], vector.raw_body)).toBe(vector.headers["X-SIGNATURE"]);
  });

  it("signs nonce first, then body (the other order does not verify)", () => {
    const swapped = signWebhook(vector.secret_hex, "", vector.raw_body + vector.headers["X-NONCE"]);
    expect(swapped).not.toBe(vector.headers["X-SIGNATURE"]);
  });

  it("serialises the vector's payload byte for byte with Python's default spacing", () => {
    const body = pythonJsonDumps({
      fiat_amount: pyFloat("100"),
      status: "AC",
      crypto_amount: pyFloat("1.21461894"),
      unconfirmed_amount: pyFloat("8"),
      confirmed_amount: pyFloat("0"),
      currency: "DASH",
      identifier: "1040095a-737d-41a2-a2e1-d031d19ec8cd",
    });
    expect(body).toBe(vector.raw_body);
    expect(signWebhook(vector.secret_hex, vector.headers["X-NONCE"], body)).toBe(vector.headers["X-SIGNATURE"]);
  });

  it("rejects a non-hex secret instead of signing with garbage", () => {
    expect(() => signWebhook("not-hex", "1", "{}")).toThrow();
  });
});

describe("Python float repr", () => {
  it.each([
    ["100", "100.0"],
    ["0", "0.0"],
    ["125.02", "125.02"],
    ["0.0034022", "0.0034022"],
    ["0.0001", "0.0001"],
    ["0.00002345", "2.345e-05"],
    ["0.00001", "1e-05"],
    ["1234567890123456", "1234567890123456.0"],
    ["10000000000000000", "1e+16"],
    ["20000.5", "20000.5"],
    ["10799136069.103672", "10799136069.103672"],
    ["0.30000000000000004", "0.30000000000000004"],
    ["12345678901234567", "1.2345678901234568e+16"],
  ])("%s is written as %s", (value, repr) => {
    expect(pythonFloatRepr(new Dec(value))).toBe(repr);
  });

  it("escapes non-ASCII like ensure_ascii and keeps compact separators for API bodies", () => {
    expect(pythonJsonDumps({ a: "Café ☕ \"q\"\n", b: [1, null, true] }, { compact: true })).toBe(
      '{"a":"Caf\\u00e9 \\u2615 \\"q\\"\\n","b":[1,null,true]}',
    );
    expect(pythonJsonDumps({ a: "😀" })).toBe('{"a": "\\ud83d\\ude00"}');
  });
});

describe("datetimes", () => {
  const recorded = gatewayExample("orders-info.response.eth_test.2022-10.Naza2021.json").body[0];
  const docsInfo = gatewayExample("orders-info.response.docs-b4bit.json").body[0];
  const docsList = gatewayExample("orders-list.response.docs-b4bit.json").body[0];
  const examples: string[] = [
    recorded.created_at,
    recorded.edited_at,
    recorded.expired_time,
    docsInfo.created_at,
    docsInfo.edited_at,
    docsInfo.expired_time,
    docsInfo.transactions[0].created_at,
    docsList.created_at,
    docsList.edited_at,
  ];

  // A Date holds milliseconds, so the recorded microseconds past them are the one difference.
  it.each(examples)("writes the instant of %s the same way: Madrid time, that day's offset", (example) => {
    const toMilliseconds = example.replace(/\.(\d{3})\d{3}(?=[+-])/, ".$1000");
    expect(gatewayDateTime(new Date(example))).toBe(toMilliseconds);
  });

  it.each([
    ["2026-01-15T12:00:00.000Z", "2026-01-15T13:00:00+01:00"],
    ["2026-03-29T00:59:59.999Z", "2026-03-29T01:59:59.999000+01:00"],
    ["2026-03-29T01:00:00.000Z", "2026-03-29T03:00:00+02:00"],
    ["2026-10-25T00:59:59.000Z", "2026-10-25T02:59:59+02:00"],
    ["2026-10-25T01:00:00.000Z", "2026-10-25T02:00:00+01:00"],
    ["2026-12-31T23:30:00.000Z", "2027-01-01T00:30:00+01:00"],
  ])("follows Madrid's winter and summer time: %s is written %s", (instant, written) => {
    expect(gatewayDateTime(new Date(instant))).toBe(written);
    expect(Date.parse(written)).toBe(Date.parse(instant));
  });
});
