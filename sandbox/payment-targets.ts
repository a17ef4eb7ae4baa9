// Where a shopper pays: per-order addresses, destination tags/memos, payment
// URIs and Lightning invoices in each chain's own format, plus transaction
// hashes and block heights. Everything derives from a hash of the order, so it
// looks deterministic yet is unique per order.
import { createHash } from "node:crypto";
import type { ChainKind, CurrencyDefinition } from "./catalogue.js";
import { Dec, plain } from "./decimal.js";
import {
  algorandAddress,
  base32Encode,
  base58Check,
  base58Encode,
  BASE58_RIPPLE,
  bech32Encode,
  cashAddress,
  convertBits,
  segwitAddress,
  stellarAccountId,
} from "./encodings.js";

function seed(...parts: string[]): Buffer {
  return createHash("sha256").update(`sandbox:${parts.join(":")}`).digest();
}

export interface PaymentTarget {
  address: string | null;
  tagMemo: string | null;
  paymentUri: string;
}

export function addressFor(chain: ChainKind, orderId: string): string | null {
  const key = seed("address", chain, orderId);
  const hash20 = key.subarray(0, 20);
  switch (chain) {
    case "bitcoin":
      return segwitAddress("bc", hash20);
    case "litecoin":
      return segwitAddress("ltc", hash20);
    case "bitcoincash":
      return cashAddress("bitcoincash", hash20);
    case "dogecoin":
      return base58Check(0x1e, hash20);
    case "ethereum":
    case "polygon":
      return `0x${hash20.toString("hex")}`;
    case "tron":
      return base58Check(0x41, hash20);
    case "solana":
      return base58Encode(key);
    case "ripple":
      return base58Check(0x00, hash20, BASE58_RIPPLE);
    case "stellar":
      return stellarAccountId(key);
    case "algorand":
      return algorandAddress(key);
    case "lightning":
      return null;
  }
}

/** A destination tag (XRP) or memo (XLM, ALGO): numeric, unique per order. */
export function tagMemoFor(def: CurrencyDefinition, orderId: string): string | null {
  if (!def.needsTagMemo) return null;
  const n = seed("tag", def.symbol, orderId).readUInt32BE(0);
  return String(100_000_000 + (n % 4_000_000_000));
}

const URI_SCHEME: Record<Exclude<ChainKind, "lightning" | "bitcoincash">, string> = {
  bitcoin: "bitcoin",
  litecoin: "litecoin",
  dogecoin: "dogecoin",
  ethereum: "ethereum",
  polygon: "polygon",
  tron: "tron",
  solana: "solana",
  ripple: "ripple",
  stellar: "stellar",
  algorand: "algorand",
};

const LIGHTNING_MULTIPLIERS: ReadonlyArray<[string, number]> = [
  ["m", 3],
  ["u", 6],
  ["n", 9],
  ["p", 12],
];

function lightningAmount(btc: Dec): string {
  for (const [suffix, exp] of LIGHTNING_MULTIPLIERS) {
    const units = btc.times(new Dec(10).pow(exp));
    if (units.isInteger()) return `${units.toFixed(0)}${suffix}`;
  }
  return `${btc.times(1e12).toFixed(0)}p`;
}

function taggedField(type: number, words: number[]): number[] {
  return [type, words.length >> 5, words.length & 31, ...words];
}

function intToWords(value: number, count: number): number[] {
  const out: number[] = [];
  let v = value;
  for (let i = 0; i < count; i++) {
    out.unshift(v % 32);
    v = Math.floor(v / 32);
  }
  return out;
}

/** Payment hash of an order's Lightning invoice (also its transaction hash). */
export function lightningPaymentHash(orderId: string): Buffer {
  return seed("ln-preimage-hash", orderId);
}

/** A BOLT11-shaped mainnet invoice (valid bech32, tagged fields, a simulated signature). */
export function lightningInvoice(orderId: string, amountBtc: Dec, createdAt: Date, expirySeconds: number, description: string): string {
  const timestamp = intToWords(Math.floor(createdAt.getTime() / 1000), 7);
  const p = taggedField(1, convertBits([...lightningPaymentHash(orderId)], 8, 5, true));
  const s = taggedField(16, convertBits([...seed("ln-secret", orderId)], 8, 5, true));
  const d = taggedField(13, convertBits([...Buffer.from(description, "utf8")], 8, 5, true));
  const x = taggedField(6, intToWords(expirySeconds, 3));
  const sig = Buffer.concat([seed("ln-sig-a", orderId), seed("ln-sig-b", orderId), Buffer.from([1])]);
  const words = [...timestamp, ...p, ...s, ...d, ...x, ...convertBits([...sig], 8, 5, true)];
  return bech32Encode(`lnbc${lightningAmount(amountBtc)}`, words);
}

export function paymentTargetFor(
  def: CurrencyDefinition,
  orderId: string,
  amount: Dec,
  fixedAt: Date,
  description: string,
): PaymentTarget {
  if (def.chain === "lightning") {
    const invoice = lightningInvoice(orderId, amount, fixedAt, def.windowMinutes * 60, description);
    return { address: null, tagMemo: null, paymentUri: invoice };
  }
  const address = addressFor(def.chain, orderId) as string;
  const tagMemo = tagMemoFor(def, orderId);
  const amountText = plain(amount);
  let uri =
    def.chain === "bitcoincash" ? `${address}?amount=${amountText}` : `${URI_SCHEME[def.chain]}:${address}?amount=${amountText}`;
  if (tagMemo !== null) uri += def.chain === "ripple" ? `&dt=${tagMemo}` : `&memo=${tagMemo}`;
  // Recorded Bitcoin orders carry the order's rbf flag (always false) in the URI as well.
  if (def.chain === "bitcoin") uri += "&rbf=false";
  return { address, tagMemo, paymentUri: uri };
}

/** A transaction hash in the chain's usual form. */
export function transactionHash(chain: ChainKind, orderId: string, index: number): string {
  if (chain === "lightning") return lightningPaymentHash(orderId).toString("hex");
  const h = seed("tx", chain, orderId, String(index));
  switch (chain) {
    case "ethereum":
    case "polygon":
      return `0x${h.toString("hex")}`;
    case "ripple":
      return h.toString("hex").toUpperCase();
    case "solana":
      return base58Encode(Buffer.concat([h, seed("tx2", chain, orderId, String(index))]));
    case "algorand":
      return base32Encode(h);
    default:
      return h.toString("hex");
  }
}

const BLOCK_REFERENCE_MS = Date.UTC(2026, 0, 1);

/** Height at 2026-01-01 and block interval of each chain. */
const BLOCKS: Record<Exclude<ChainKind, "lightning">, { height: number; intervalMs: number }> = {
  bitcoin: { height: 930_000, intervalMs: 600_000 },
  litecoin: { height: 2_950_000, intervalMs: 150_000 },
  bitcoincash: { height: 930_500, intervalMs: 600_000 },
  dogecoin: { height: 5_950_000, intervalMs: 60_000 },
  ethereum: { height: 24_100_000, intervalMs: 12_000 },
  polygon: { height: 80_000_000, intervalMs: 2_000 },
  tron: { height: 78_000_000, intervalMs: 3_000 },
  solana: { height: 385_000_000, intervalMs: 400 },
  ripple: { height: 100_500_000, intervalMs: 4_000 },
  stellar: { height: 60_000_000, intervalMs: 5_000 },
  algorand: { height: 52_000_000, intervalMs: 3_000 },
};

/** The block that confirms a transaction at the given time; null off-chain (Lightning). */
export function blockHeightAt(chain: ChainKind, at: Date): number | null {
  if (chain === "lightning") return null;
  const b = BLOCKS[chain];
  return Math.max(1, b.height + Math.floor((at.getTime() - BLOCK_REFERENCE_MS) / b.intervalMs));
}
