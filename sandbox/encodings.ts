// Address and invoice encodings of the chains the sandbox imitates (bech32,
// Base58Check, CashAddr, RFC 4648 base32, CRC16-XModem), so the addresses it
// hands out pass each chain's own format checks.
import { createHash } from "node:crypto";

const BECH32_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
const BECH32_GEN = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];

function bech32Polymod(values: readonly number[]): number {
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) {
      if ((top >>> i) & 1) chk ^= BECH32_GEN[i] as number;
    }
  }
  return chk;
}

function bech32HrpExpand(hrp: string): number[] {
  const out: number[] = [];
  for (const c of hrp) out.push(c.charCodeAt(0) >> 5);
  out.push(0);
  for (const c of hrp) out.push(c.charCodeAt(0) & 31);
  return out;
}

/** bech32 (BIP-173) encoding of 5-bit words, with no length limit (BOLT11 needs long strings). */
export function bech32Encode(hrp: string, words: readonly number[]): string {
  const mod = bech32Polymod([...bech32HrpExpand(hrp), ...words, 0, 0, 0, 0, 0, 0]) ^ 1;
  const checksum: number[] = [];
  for (let i = 0; i < 6; i++) checksum.push((mod >>> (5 * (5 - i))) & 31);
  return `${hrp}1${[...words, ...checksum].map((w) => BECH32_CHARSET[w]).join("")}`;
}

/** True when the string is valid bech32 (checksum included). */
export function bech32Verify(text: string): boolean {
  const lower = text.toLowerCase();
  const sep = lower.lastIndexOf("1");
  if (sep < 1 || lower.length - sep < 7) return false;
  const hrp = lower.slice(0, sep);
  const words: number[] = [];
  for (const c of lower.slice(sep + 1)) {
    const w = BECH32_CHARSET.indexOf(c);
    if (w < 0) return false;
    words.push(w);
  }
  return bech32Polymod([...bech32HrpExpand(hrp), ...words]) === 1;
}

export function convertBits(data: readonly number[], from: number, to: number, pad: boolean): number[] {
  let acc = 0;
  let bits = 0;
  const out: number[] = [];
  const maxv = (1 << to) - 1;
  for (const value of data) {
    acc = (acc << from) | value;
    bits += from;
    while (bits >= to) {
      bits -= to;
      out.push((acc >> bits) & maxv);
    }
    acc &= (1 << bits) - 1;
  }
  if (pad && bits > 0) out.push((acc << (to - bits)) & maxv);
  return out;
}

/** A segwit v0 address (P2WPKH for a 20-byte program). */
export function segwitAddress(hrp: string, program: Uint8Array): string {
  return bech32Encode(hrp, [0, ...convertBits([...program], 8, 5, true)]);
}

export const BASE58_BITCOIN = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
export const BASE58_RIPPLE = "rpshnaf39wBUDNEGHJKLM4PQRST7VWXYZ2bcdeCg65jkm8oFqi1tuvAxyz";

export function base58Encode(bytes: Uint8Array, alphabet = BASE58_BITCOIN): string {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  let out = "";
  while (n > 0n) {
    out = (alphabet[Number(n % 58n)] as string) + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = (alphabet[0] as string) + out;
  }
  return out;
}

export function sha256(data: Uint8Array | string): Buffer {
  return createHash("sha256").update(data).digest();
}

export function base58Check(version: number, payload: Uint8Array, alphabet = BASE58_BITCOIN): string {
  const body = Buffer.concat([Buffer.from([version]), Buffer.from(payload)]);
  const check = sha256(sha256(body)).subarray(0, 4);
  return base58Encode(Buffer.concat([body, check]), alphabet);
}

const CASHADDR_GENS = [0x98f2bc8e61n, 0x79b76d99e2n, 0xf33e5fb3c4n, 0xae2eabe2a8n, 0x1e4f43e470n];

function cashAddrPolymod(values: readonly number[]): bigint {
  let c = 1n;
  for (const d of values) {
    const c0 = c >> 35n;
    c = ((c & 0x07ffffffffn) << 5n) ^ BigInt(d);
    for (let i = 0; i < 5; i++) {
      if ((c0 >> BigInt(i)) & 1n) c ^= CASHADDR_GENS[i] as bigint;
    }
  }
  return c ^ 1n;
}

/** A CashAddr P2PKH address for a 20-byte hash, prefix included (bitcoincash:q...). */
export function cashAddress(prefix: string, hash160: Uint8Array): string {
  const payload = convertBits([0, ...hash160], 8, 5, true);
  const prefixWords = [...prefix].map((c) => c.charCodeAt(0) & 31);
  const mod = cashAddrPolymod([...prefixWords, 0, ...payload, 0, 0, 0, 0, 0, 0, 0, 0]);
  const checksum: number[] = [];
  for (let i = 0; i < 8; i++) checksum.push(Number((mod >> BigInt(5 * (7 - i))) & 31n));
  return `${prefix}:${[...payload, ...checksum].map((w) => BECH32_CHARSET[w]).join("")}`;
}

/** True when a CashAddr string's checksum verifies. */
export function cashAddressVerify(address: string): boolean {
  const [prefix, data] = address.split(":");
  if (!prefix || !data) return false;
  const words = [...data].map((c) => BECH32_CHARSET.indexOf(c));
  if (words.some((w) => w < 0)) return false;
  const prefixWords = [...prefix].map((c) => c.charCodeAt(0) & 31);
  return cashAddrPolymod([...prefixWords, 0, ...words]) === 0n;
}

const BASE32_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** RFC 4648 base32 without padding. */
export function base32Encode(bytes: Uint8Array): string {
  return convertBits([...bytes], 8, 5, true)
    .map((w) => BASE32_ALPHABET[w])
    .join("");
}

export function crc16Xmodem(bytes: Uint8Array): number {
  let crc = 0;
  for (const b of bytes) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** A Stellar account id (StrKey "G..."). */
export function stellarAccountId(publicKey: Uint8Array): string {
  const body = Buffer.concat([Buffer.from([6 << 3]), Buffer.from(publicKey)]);
  const crc = crc16Xmodem(body);
  return base32Encode(Buffer.concat([body, Buffer.from([crc & 0xff, crc >> 8])]));
}

/** An Algorand address: the public key followed by the last 4 bytes of its SHA-512/256. */
export function algorandAddress(publicKey: Uint8Array): string {
  const check = createHash("sha512-256").update(publicKey).digest().subarray(28);
  return base32Encode(Buffer.concat([Buffer.from(publicKey), check]));
}
