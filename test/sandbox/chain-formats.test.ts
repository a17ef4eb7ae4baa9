// Addresses, memos, payment URIs and Lightning invoices are in each chain's
// real format (checksums included) and unique per order.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CURRENCIES, findCurrency } from "../../sandbox/catalogue.js";
import { Dec } from "../../sandbox/decimal.js";
import { BASE58_BITCOIN, BASE58_RIPPLE, bech32Verify, cashAddressVerify, crc16Xmodem } from "../../sandbox/encodings.js";
import { addressFor, lightningInvoice, paymentTargetFor } from "../../sandbox/payment-targets.js";

function base58Decode(text: string, alphabet: string): Buffer {
  let n = 0n;
  for (const c of text) {
    const i = alphabet.indexOf(c);
    if (i < 0) throw new Error(`bad base58 char ${c}`);
    n = n * 58n + BigInt(i);
  }
  const hex = n.toString(16);
  const bytes = Buffer.from(hex.length % 2 ? `0${hex}` : hex, "hex");
  let zeros = 0;
  while (text[zeros] === alphabet[0]) zeros++;
  return Buffer.concat([Buffer.alloc(zeros), bytes]);
}

function base58CheckOk(text: string, alphabet: string, version: number): boolean {
  const raw = base58Decode(text, alphabet);
  const body = raw.subarray(0, raw.length - 4);
  const check = createHash("sha256").update(createHash("sha256").update(body).digest()).digest().subarray(0, 4);
  return raw.length === 25 && body[0] === version && check.equals(raw.subarray(raw.length - 4));
}

function base32Decode(text: string): Buffer {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const c of text) {
    value = (value << 5) | alphabet.indexOf(c);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

const ORDER_A = "0b7c2b8e-5f0e-4a4c-9d1e-6f3a2b1c0d9e";
const ORDER_B = "7d1e0f2a-3b4c-4d5e-8f6a-7b8c9d0e1f2a";

describe("addresses in each chain's format", () => {
  it("bitcoin and litecoin: bech32 P2WPKH with a valid checksum", () => {
    const btc = addressFor("bitcoin", ORDER_A) as string;
    const ltc = addressFor("litecoin", ORDER_A) as string;
    expect(btc).toMatch(/^bc1q[02-9ac-hj-np-z]{38}$/);
    expect(ltc).toMatch(/^ltc1q[02-9ac-hj-np-z]{38}$/);
    expect(bech32Verify(btc)).toBe(true);
    expect(bech32Verify(ltc)).toBe(true);
    expect(bech32Verify(btc.slice(0, -1) + (btc.endsWith("q") ? "p" : "q"))).toBe(false);
  });

  it("bitcoin cash: CashAddr with a valid checksum", () => {
    const bch = addressFor("bitcoincash", ORDER_A) as string;
    expect(bch).toMatch(/^bitcoincash:q[02-9ac-hj-np-z]{41}$/);
    expect(cashAddressVerify(bch)).toBe(true);
  });

  it("dogecoin, tron and ripple: Base58Check with their version bytes", () => {
    const doge = addressFor("dogecoin", ORDER_A) as string;
    const trx = addressFor("tron", ORDER_A) as string;
    const xrp = addressFor("ripple", ORDER_A) as string;
    expect(doge).toMatch(/^D/);
    expect(trx).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    expect(xrp).toMatch(/^r/);
    expect(base58CheckOk(doge, BASE58_BITCOIN, 0x1e)).toBe(true);
    expect(base58CheckOk(trx, BASE58_BITCOIN, 0x41)).toBe(true);
    expect(base58CheckOk(xrp, BASE58_RIPPLE, 0x00)).toBe(true);
  });

  it("ethereum and polygon: 0x and 40 hex digits; solana: 32 bytes in base58", () => {
    expect(addressFor("ethereum", ORDER_A)).toMatch(/^0x[0-9a-f]{40}$/);
    expect(addressFor("polygon", ORDER_A)).toMatch(/^0x[0-9a-f]{40}$/);
    const sol = addressFor("solana", ORDER_A) as string;
    expect(sol).toMatch(/^[1-9A-HJ-NP-Za-km-z]{43,44}$/);
    expect(base58Decode(sol, BASE58_BITCOIN)).toHaveLength(32);
  });

  it("stellar: a G... StrKey with its CRC16; algorand: 58 chars with its SHA-512/256 checksum", () => {
    const xlm = addressFor("stellar", ORDER_A) as string;
    expect(xlm).toMatch(/^G[A-Z2-7]{55}$/);
    const raw = base32Decode(xlm);
    const crc = crc16Xmodem(raw.subarray(0, 33));
    expect(raw.readUInt16LE(33)).toBe(crc);
    const algo = addressFor("algorand", ORDER_A) as string;
    expect(algo).toMatch(/^[A-Z2-7]{58}$/);
    const a = base32Decode(algo);
    const check = createHash("sha512-256").update(a.subarray(0, 32)).digest().subarray(28);
    expect(a.subarray(32, 36).equals(check)).toBe(true);
  });

  it("gives every order its own address", () => {
    for (const chain of ["bitcoin", "ethereum", "tron", "ripple", "stellar", "solana"] as const) {
      expect(addressFor(chain, ORDER_A)).not.toBe(addressFor(chain, ORDER_B));
    }
  });
});

describe("payment URIs and invoices", () => {
  it("writes scheme:<address>?amount=<amount>, with the tag or memo where the chain needs one and Bitcoin's rbf flag", () => {
    const at = new Date("2026-03-10T12:00:00Z");
    const amount = new Dec("12.5");
    const btc = paymentTargetFor(findCurrency("BTC")!, ORDER_A, new Dec("0.00012345"), at, "x");
    expect(btc.paymentUri).toBe(`bitcoin:${btc.address}?amount=0.00012345&rbf=false`);
    expect(btc.tagMemo).toBeNull();
    const xrp = paymentTargetFor(findCurrency("XRP")!, ORDER_A, amount, at, "x");
    expect(xrp.tagMemo).toMatch(/^\d+$/);
    expect(xrp.paymentUri).toBe(`ripple:${xrp.address}?amount=12.5&dt=${xrp.tagMemo}`);
    const xlm = paymentTargetFor(findCurrency("XLM")!, ORDER_A, amount, at, "x");
    expect(xlm.paymentUri).toBe(`stellar:${xlm.address}?amount=12.5&memo=${xlm.tagMemo}`);
    const algo = paymentTargetFor(findCurrency("ALGO")!, ORDER_A, amount, at, "x");
    expect(algo.paymentUri).toBe(`algorand:${algo.address}?amount=12.5&memo=${algo.tagMemo}`);
    const bch = paymentTargetFor(findCurrency("BCH")!, ORDER_A, amount, at, "x");
    expect(bch.paymentUri).toBe(`${bch.address}?amount=12.5`);
    expect(paymentTargetFor(findCurrency("ETH")!, ORDER_A, amount, at, "x").paymentUri).toMatch(/^ethereum:0x[0-9a-f]{40}\?amount=12\.5$/);
  });

  it("needs a tag or memo exactly for XRP, XLM and ALGO", () => {
    expect(CURRENCIES.filter((c) => c.needsTagMemo).map((c) => c.symbol).sort()).toEqual(["ALGO", "XLM", "XRP"]);
  });

  it("makes a BOLT11-shaped Lightning invoice with the amount in its prefix and a valid bech32 checksum", () => {
    const inv = lightningInvoice(ORDER_A, new Dec("0.00025"), new Date("2026-03-10T12:00:00Z"), 900, "Payment abc");
    expect(inv).toMatch(/^lnbc250u1[02-9ac-hj-np-z]+$/);
    expect(bech32Verify(inv)).toBe(true);
    expect(lightningInvoice(ORDER_A, new Dec("0.00012345"), new Date(0), 900, "x")).toMatch(/^lnbc123450n1/);
    const target = paymentTargetFor(findCurrency("BTCL")!, ORDER_A, new Dec("0.00025"), new Date(), "x");
    expect(target.address).toBeNull();
    expect(target.paymentUri).toMatch(/^lnbc/);
  });
});
