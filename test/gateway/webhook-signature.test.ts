import { describe, expect, it } from "vitest";
import { signatureMatches, signWebhook, verifyWebhookSignature, type VerifyWebhookInput } from "../../app/gateway/webhook-signature";
import { fixtureJson } from "./support/fixtures";

interface Vector {
  headers: { "X-NONCE": string; "X-SIGNATURE": string };
  secret_hex: string;
  raw_body: string;
}

const vector = fixtureJson<Vector>("webhook.test-vector.bitnovo-gitbook.json");
const nonce = vector.headers["X-NONCE"];
const nonceMs = Number(nonce) * 1000;

function input(overrides: Partial<VerifyWebhookInput> = {}): VerifyWebhookInput {
  return {
    secretHex: vector.secret_hex,
    nonce,
    signature: vector.headers["X-SIGNATURE"],
    rawBody: vector.raw_body,
    now: new Date(nonceMs + 3_000),
    ...overrides,
  };
}

describe("webhook signature", () => {
  it("the official test vector verifies", () => {
    expect(verifyWebhookSignature(input())).toEqual({ ok: true, nonceTime: new Date(nonceMs), signature: vector.headers["X-SIGNATURE"].toLowerCase() });
  });

  it("names the verified signature in one spelling, whatever the case of the header's hex", () => {
    const upper = verifyWebhookSignature(input({ signature: vector.headers["X-SIGNATURE"].toUpperCase() }));
    expect(upper).toMatchObject({ ok: true, signature: vector.headers["X-SIGNATURE"].toLowerCase() });
  });

  it("signing reproduces the official signature", () => {
    expect(signWebhook({ secretHex: vector.secret_hex, nonce, rawBody: vector.raw_body })).toBe(vector.headers["X-SIGNATURE"]);
  });

  it("accepts the raw body as bytes", () => {
    expect(verifyWebhookSignature(input({ rawBody: new TextEncoder().encode(vector.raw_body) })).ok).toBe(true);
  });

  it("accepts an upper-case signature", () => {
    expect(verifyWebhookSignature(input({ signature: vector.headers["X-SIGNATURE"].toUpperCase() })).ok).toBe(true);
  });

  it("the same body re-serialised with JSON.stringify does not verify", () => {
    const reserialised = JSON.stringify(JSON.parse(vector.raw_body));
    expect(reserialised).not.toBe(vector.raw_body);
    expect(verifyWebhookSignature(input({ rawBody: reserialised }))).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("body followed by nonce, or a trailing newline, does not verify", () => {
    const swapped = signWebhook({ secretHex: vector.secret_hex, nonce: "", rawBody: vector.raw_body + nonce });
    expect(verifyWebhookSignature(input({ signature: swapped })).ok).toBe(false);
    expect(verifyWebhookSignature(input({ rawBody: `${vector.raw_body}\n` }))).toEqual({ ok: false, reason: "bad_signature" });
  });

  it("a key used as text instead of hex-decoded bytes does not verify", () => {
    const forged = signWebhook({ secretHex: Buffer.from(vector.secret_hex, "utf8").toString("hex"), nonce, rawBody: vector.raw_body });
    expect(verifyWebhookSignature(input({ signature: forged }))).toEqual({ ok: false, reason: "bad_signature" });
  });

  it.each<[string, Partial<VerifyWebhookInput>, string]>([
    ["no nonce", { nonce: undefined }, "missing_nonce"],
    ["empty nonce", { nonce: "" }, "missing_nonce"],
    ["no signature", { signature: null }, "missing_signature"],
    ["empty signature", { signature: "  " }, "missing_signature"],
    ["a non-numeric nonce", { nonce: "2022-02-23T16:49:02Z" }, "malformed_nonce"],
    ["a negative nonce", { nonce: "-1645634942" }, "malformed_nonce"],
    ["a short signature", { signature: "ff2ac6c5" }, "malformed_signature"],
    ["a non-hex signature", { signature: "z".repeat(64) }, "malformed_signature"],
    // Taken as they came (HTTP strips spaces and tabs itself): a signature or nonce with other
    // white space around it would be a second spelling of one notification.
    ["a signature padded with a no-break space", { signature: `${vector.headers["X-SIGNATURE"]}\u00a0` }, "malformed_signature"],
    ["a signature padded with a space", { signature: ` ${vector.headers["X-SIGNATURE"]}` }, "malformed_signature"],
    ["a nonce padded with a no-break space", { nonce: `${nonce}\u00a0` }, "malformed_nonce"],
    ["an odd-length secret", { secretHex: "abc" }, "malformed_secret"],
    ["a non-hex secret", { secretHex: "not-hex!" }, "malformed_secret"],
    ["an empty secret", { secretHex: "" }, "malformed_secret"],
    ["a nonce 21 s old", { now: new Date(nonceMs + 21_000) }, "stale_nonce"],
    ["a nonce 10 s ahead", { now: new Date(nonceMs - 10_000) }, "future_nonce"],
    ["another secret", { secretHex: "00".repeat(32) }, "bad_signature"],
    ["another nonce", { nonce: String(Number(nonce) + 1) }, "bad_signature"],
  ])("rejects %s", (_label, overrides, reason) => {
    expect(verifyWebhookSignature(input(overrides))).toEqual({ ok: false, reason });
  });

  it("the age limits are configurable", () => {
    expect(verifyWebhookSignature(input({ now: new Date(nonceMs + 21_000), maxAgeSeconds: 30 })).ok).toBe(true);
    expect(verifyWebhookSignature(input({ now: new Date(nonceMs + 20_000) })).ok).toBe(true);
    expect(verifyWebhookSignature(input({ now: new Date(nonceMs - 10_000), maxFutureSkewSeconds: 10 })).ok).toBe(true);
  });

  it("signWebhook refuses a malformed secret", () => {
    expect(() => signWebhook({ secretHex: "abc", nonce, rawBody: "{}" })).toThrow();
  });

  it("a notification taken already is asked again of a Secret Key whatever its nonce's age, and only its own Secret Key, nonce and body match", () => {
    const stored = { secretHex: vector.secret_hex, nonce, signature: vector.headers["X-SIGNATURE"].toLowerCase(), rawBody: vector.raw_body };
    // The test vector's nonce is years old: the door would refuse it as stale, the question here is only who signed it.
    expect(signatureMatches(stored)).toBe(true);
    expect(signatureMatches({ ...stored, rawBody: new TextEncoder().encode(vector.raw_body) })).toBe(true);
    expect(signatureMatches({ ...stored, secretHex: "ab".repeat(32) })).toBe(false);
    expect(signatureMatches({ ...stored, nonce: String(Number(nonce) + 1) })).toBe(false);
    expect(signatureMatches({ ...stored, rawBody: `${vector.raw_body} ` })).toBe(false);
    for (const malformed of [{ secretHex: "abc" }, { nonce: "" }, { nonce: "12a" }, { signature: "" }, { signature: "zz".repeat(32) }]) {
      expect(signatureMatches({ ...stored, ...malformed })).toBe(false);
    }
  });
});
