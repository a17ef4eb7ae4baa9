// Owns the gateway's webhook signature: X-SIGNATURE is the hex HMAC-SHA256,
// keyed with the hex-decoded Secret Key, of X-NONCE followed by the raw body
// bytes exactly as received. Also rejects nonces outside a freshness window.
// Remembering nonce+signature pairs already seen is the receiver's job.

import { createHmac, timingSafeEqual } from "node:crypto";

export type RawBody = string | Uint8Array;

const HEX_SECRET = /^(?:[0-9a-fA-F]{2})+$/;
const HEX_SIGNATURE = /^[0-9a-fA-F]{64}$/;
const NONCE = /^\d{1,15}$/;

function bodyBytes(rawBody: RawBody): Uint8Array {
  return typeof rawBody === "string" ? Buffer.from(rawBody, "utf8") : rawBody;
}

function hmac(secretHex: string, nonce: string, rawBody: RawBody): Buffer {
  return createHmac("sha256", Buffer.from(secretHex, "hex"))
    .update(Buffer.from(nonce, "utf8"))
    .update(bodyBytes(rawBody))
    .digest();
}

/** Signs like the service does; throws on a secret that is not even-length hex (a programming error). */
export function signWebhook(input: { secretHex: string; nonce: string; rawBody: RawBody }): string {
  if (!HEX_SECRET.test(input.secretHex)) throw new Error("webhook secret must be non-empty, even-length hex");
  return hmac(input.secretHex, input.nonce, input.rawBody).toString("hex");
}

/**
 * Whether `signature` is the one the Secret Key gives this nonce and body, whatever the nonce's
 * age: for a notification taken already (its freshness was checked when it came), asked again
 * of another Secret Key. False for a malformed nonce, signature or secret. Compared in constant
 * time, as at the door.
 */
export function signatureMatches(input: { secretHex: string; nonce: string; signature: string; rawBody: RawBody }): boolean {
  // The door's own check, at the nonce's own time, so that only its age cannot refuse it.
  return verifyWebhookSignature({ ...input, now: new Date(Number(input.nonce) * 1000) }).ok;
}

export type WebhookRejection =
  | "missing_nonce"
  | "missing_signature"
  | "malformed_nonce"
  | "malformed_signature"
  | "malformed_secret"
  | "stale_nonce"
  | "future_nonce"
  | "bad_signature";

/**
 * `signature`: the verified signature in one spelling (lower-case hex), the one a replay guard
 * must key on: the header's own text may differ in case for the same signature.
 */
export type WebhookVerification = { ok: true; nonceTime: Date; signature: string } | { ok: false; reason: WebhookRejection };

export interface VerifyWebhookInput {
  secretHex: string;
  /** X-NONCE: Unix time in seconds, as text. */
  nonce: string | null | undefined;
  /** X-SIGNATURE: 64 hex characters. */
  signature: string | null | undefined;
  /** The body exactly as received: never a re-serialised object. */
  rawBody: RawBody;
  now: Date;
  /** Oldest accepted nonce, in seconds before now. */
  maxAgeSeconds?: number;
  /** Tolerated clock lead of the sender, in seconds after now. */
  maxFutureSkewSeconds?: number;
}

export const DEFAULT_WEBHOOK_MAX_AGE_SECONDS = 20;
export const DEFAULT_WEBHOOK_MAX_FUTURE_SKEW_SECONDS = 5;

export function verifyWebhookSignature(input: VerifyWebhookInput): WebhookVerification {
  const maxAge = input.maxAgeSeconds ?? DEFAULT_WEBHOOK_MAX_AGE_SECONDS;
  const maxSkew = input.maxFutureSkewSeconds ?? DEFAULT_WEBHOOK_MAX_FUTURE_SKEW_SECONDS;
  // Taken as they came: HTTP already strips the spaces and tabs around a header's value, and
  // trimming more (JavaScript's trim takes a no-break space too) would let variants of one
  // signature pass the check as different texts, each a "new" notification to a replay guard.
  const { nonce, signature } = input;
  if (nonce === undefined || nonce === null || nonce.trim() === "") return { ok: false, reason: "missing_nonce" };
  if (signature === undefined || signature === null || signature.trim() === "") return { ok: false, reason: "missing_signature" };
  if (!NONCE.test(nonce)) return { ok: false, reason: "malformed_nonce" };
  if (!HEX_SIGNATURE.test(signature)) return { ok: false, reason: "malformed_signature" };
  if (!HEX_SECRET.test(input.secretHex)) return { ok: false, reason: "malformed_secret" };

  const expected = hmac(input.secretHex, nonce, input.rawBody);
  if (!timingSafeEqual(expected, Buffer.from(signature, "hex"))) return { ok: false, reason: "bad_signature" };

  const nonceSeconds = Number(nonce);
  const nowSeconds = input.now.getTime() / 1000;
  if (nonceSeconds < nowSeconds - maxAge) return { ok: false, reason: "stale_nonce" };
  if (nonceSeconds > nowSeconds + maxSkew) return { ok: false, reason: "future_nonce" };
  return { ok: true, nonceTime: new Date(nonceSeconds * 1000), signature: expected.toString("hex") };
}
