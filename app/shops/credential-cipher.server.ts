// Encrypts gateway credentials and Shopify tokens at rest with AES-256-GCM (authenticated, with
// the full 16-byte tag). Each ciphertext names the key that sealed it, so keys can be rotated:
// the first key encrypts, every listed key decrypts, and `needsRotation` tells which values to
// re-seal.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { EncryptionKey } from "~/config/env.server";

const VERSION = "v1";
/** GCM's full tag: a shorter one would be checked on its first bytes only, so it is refused. */
const AUTH_TAG_BYTES = 16;

export interface CredentialCipher {
  encrypt(plaintext: string, context: string): string;
  decrypt(sealed: string, context: string): string;
  needsRotation(sealed: string): boolean;
}

export class CredentialDecryptionError extends Error {
  override name = "CredentialDecryptionError";
}

/**
 * By name, not `instanceof`: in development the pages run on Vite's own copy of this module,
 * while the services (and their cipher) were loaded by the server.
 */
export function isCredentialDecryptionError(error: unknown): boolean {
  return error instanceof Error && error.name === "CredentialDecryptionError";
}

export function createCredentialCipher(keys: readonly EncryptionKey[]): CredentialCipher {
  const current = keys[0];
  if (!current) throw new Error("at least one encryption key is required");
  const byId = new Map(keys.map((k) => [k.id, k.key]));
  // The configuration refuses a repeated id; a cipher that kept only one of two keys under it would fail to open what the other sealed.
  if (byId.size !== keys.length) throw new Error("each encryption key needs an id of its own");
  return {
    // `context` (e.g. "shop-id:live:device-key") is bound as additional data, so a value
    // copied to another shop or field does not decrypt.
    encrypt(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", current.key, iv, { authTagLength: AUTH_TAG_BYTES });
      cipher.setAAD(Buffer.from(context, "utf8"));
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [VERSION, current.id, iv.toString("base64url"), tag.toString("base64url"), body.toString("base64url")].join(":");
    },
    decrypt(sealed, context) {
      const [version, keyId, iv, tag, body] = sealed.split(":");
      const key = keyId ? byId.get(keyId) : undefined;
      if (version !== VERSION || !key || !iv || !tag || body === undefined) {
        throw new CredentialDecryptionError("stored credential cannot be decrypted with the configured keys");
      }
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"), { authTagLength: AUTH_TAG_BYTES });
        decipher.setAAD(Buffer.from(context, "utf8"));
        decipher.setAuthTag(Buffer.from(tag, "base64url"));
        return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
      } catch {
        throw new CredentialDecryptionError("stored credential failed authentication");
      }
    },
    needsRotation(sealed) {
      return sealed.split(":")[1] !== current.id;
    },
  };
}

/** Whether a stored value is in the sealed form (and not, say, a token stored in clear before values were sealed). */
export function isSealed(value: string): boolean {
  const parts = value.split(":");
  return parts.length === 5 && parts[0] === VERSION;
}

/** What the admin shows of a secret: never the whole value. */
export function maskSecret(value: string): string {
  const tail = value.slice(-4);
  return `••••••••${tail}`;
}
