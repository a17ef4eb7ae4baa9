// Signs webhook bodies as the real service does:
// X-SIGNATURE = hex(HMAC-SHA256(key = hex-decoded Secret Key, msg = nonce + raw body)).
import { createHmac } from "node:crypto";

const HEX_KEY = /^(?:[0-9a-fA-F]{2})+$/;

export function isHexSecret(secretHex: string): boolean {
  return HEX_KEY.test(secretHex);
}

export function signWebhook(secretHex: string, nonce: string, rawBody: string): string {
  if (!isHexSecret(secretHex)) throw new Error("the Secret Key must be hex");
  return createHmac("sha256", Buffer.from(secretHex, "hex"))
    .update(Buffer.concat([Buffer.from(nonce, "utf8"), Buffer.from(rawBody, "utf8")]))
    .digest("hex");
}
