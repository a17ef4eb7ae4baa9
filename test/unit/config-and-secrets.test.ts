import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConfigurationError, parseEnv } from "../../app/config/env.server";
import { createCredentialCipher, CredentialDecryptionError, maskSecret } from "../../app/shops/credential-cipher.server";
import { createLogger, registeredSecretCount, registerSecret } from "../../app/lib/logger.server";

const key = (id: string) => ({ id, key: new Uint8Array(randomBytes(32)) });

/** The message parseEnv refuses the variables with, or "" when it takes them. */
function refusalOf(variables: Record<string, string | undefined>): string {
  try {
    parseEnv(variables);
  } catch (error) {
    return (error as Error).message;
  }
  return "";
}

describe("configuration", () => {
  it("names every missing or malformed variable", () => {
    try {
      parseEnv({ NODE_ENV: "production", DATABASE_URL: "mysql://nope", PORT: "http" });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError);
      const message = (error as Error).message;
      for (const name of ["DATABASE_URL", "PORT", "SHOPIFY_API_KEY", "SHOPIFY_API_SECRET", "SHOPIFY_APP_URL", "CREDENTIALS_ENCRYPTION_KEYS", "MTLS_MODE"]) expect(message).toContain(name);
    }
  });

  /** A complete production configuration but for the app's address. */
  const productionWithoutAddress = {
    NODE_ENV: "production",
    SHOPIFY_API_KEY: "k",
    SHOPIFY_API_SECRET: "s",
    CREDENTIALS_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString("base64")}`,
    MTLS_MODE: "proxy",
    MTLS_PROXY_HEADER_VALUE: randomBytes(32).toString("hex"),
  };

  it("refuses the development encryption key in production, under any id, naming only the id", () => {
    const production = { ...productionWithoutAddress, SHOPIFY_APP_URL: "https://crypto-checkout.example.com" };
    const material = "ZGV2LW9ubHkta2V5LW5ldmVyLWluLXByb2R1Y3Rpb24=";
    for (const keys of [`dev:${material}`, `k2:${randomBytes(32).toString("base64")},old:${material}`]) {
      const refusal = refusalOf({ ...production, CREDENTIALS_ENCRYPTION_KEYS: keys });
      expect(refusal).toMatch(/CREDENTIALS_ENCRYPTION_KEYS: the key "(dev|old)" is the development key/);
      expect(refusal).not.toContain(material);
    }
    // Outside production it is the default.
    expect(parseEnv({ NODE_ENV: "development" }).CREDENTIALS_ENCRYPTION_KEYS.map((k) => k.id)).toEqual(["dev"]);
  });

  it("refuses in production an encryption key with too few distinct bytes to be secret, naming only the id", () => {
    const production = { ...productionWithoutAddress, SHOPIFY_APP_URL: "https://crypto-checkout.example.com" };
    const fresh = randomBytes(32).toString("base64");
    const patterned = Buffer.from(Array.from({ length: 32 }, (_, i) => i % 15)).toString("base64");
    for (const [id, material] of [["zero", Buffer.alloc(32, 0).toString("base64")], ["same", Buffer.alloc(32, 0x41).toString("base64")], ["few", patterned]] as const) {
      for (const keys of [`${id}:${material}`, `k2:${fresh},${id}:${material}`]) {
        const refusal = refusalOf({ ...production, CREDENTIALS_ENCRYPTION_KEYS: keys });
        expect(refusal, keys).toContain(`CREDENTIALS_ENCRYPTION_KEYS: the key "${id}" has too few distinct bytes`);
        expect(refusal).not.toContain(material);
        expect(refusal).not.toContain(fresh);
      }
    }
    // 16 distinct values pass, and random keys always do; outside production nothing is checked.
    expect(() => parseEnv({ ...production, CREDENTIALS_ENCRYPTION_KEYS: `k:${Buffer.from(Array.from({ length: 32 }, (_, i) => i % 16)).toString("base64")}` })).not.toThrow();
    expect(() => parseEnv({ ...production, CREDENTIALS_ENCRYPTION_KEYS: `k:${fresh}` })).not.toThrow();
    expect(() => parseEnv({ CREDENTIALS_ENCRYPTION_KEYS: `zero:${Buffer.alloc(32, 0).toString("base64")}` })).not.toThrow();
  });

  it("refuses a key list with a \":\" where a \",\" belongs, or a key that is not base64, naming no key material", () => {
    const [fresh, old] = [randomBytes(32).toString("base64"), randomBytes(32).toString("base64")];
    // Read as the first key alone, every value sealed with the old one would be unreadable.
    const colon = refusalOf({ CREDENTIALS_ENCRYPTION_KEYS: `new:${fresh}:old:${old}` });
    expect(colon).toMatch(/CREDENTIALS_ENCRYPTION_KEYS: an entry holds 3 ":": entries are separated by ","/);
    expect(refusalOf({ CREDENTIALS_ENCRYPTION_KEYS: `new:${fresh}:garbage` })).toMatch(/an entry holds 2 ":"/);
    // A character base64 does not have, which a lenient decoder would skip.
    const mistyped = `${fresh.slice(0, 10)}!${fresh.slice(10)}`;
    expect(refusalOf({ CREDENTIALS_ENCRYPTION_KEYS: `new:${mistyped}` })).toMatch(/each entry must be <id>:<32 bytes in base64>/);
    for (const message of [colon, refusalOf({ CREDENTIALS_ENCRYPTION_KEYS: `new:${mistyped}` })]) {
      expect(message).not.toContain(fresh.slice(0, 12));
      expect(message).not.toContain(old.slice(0, 12));
    }
    expect(parseEnv({ CREDENTIALS_ENCRYPTION_KEYS: `new:${fresh},old:${old}` }).CREDENTIALS_ENCRYPTION_KEYS.map((k) => k.id)).toEqual(["new", "old"]);
    expect(parseEnv({ CREDENTIALS_ENCRYPTION_KEYS: `url:${Buffer.from(randomBytes(32)).toString("base64url")}` }).CREDENTIALS_ENCRYPTION_KEYS.map((k) => k.id)).toEqual(["url"]);
  });

  it("refuses a gateway limit the database cannot count to, on either database", () => {
    for (const name of ["GATEWAY_LIMIT_PER_MINUTE", "GATEWAY_LIMIT_PER_DAY", "GATEWAY_CRITICAL_LIMIT_PER_MINUTE", "GATEWAY_CRITICAL_LIMIT_PER_DAY"]) {
      expect(refusalOf({ [name]: "3000000000" })).toMatch(new RegExp(`${name}: must be at most 2147483647`));
      expect(parseEnv({ [name]: "2147483647" })[name as "GATEWAY_LIMIT_PER_DAY"]).toBe(2147483647);
    }
  });

  it("refuses general gateway limits at or below the calls kept free for new orders, under which reconciliation would never read", () => {
    expect(refusalOf({ GATEWAY_LIMIT_PER_MINUTE: "20" })).toMatch(/GATEWAY_LIMIT_PER_MINUTE: must be more than the 20 calls a minute kept free for new orders/);
    expect(refusalOf({ GATEWAY_LIMIT_PER_MINUTE: "15" })).toMatch(/GATEWAY_LIMIT_PER_MINUTE/);
    expect(refusalOf({ GATEWAY_LIMIT_PER_DAY: "500" })).toMatch(/GATEWAY_LIMIT_PER_DAY: must be more than the 600 calls a day kept free for new orders/);
    expect(parseEnv({ GATEWAY_LIMIT_PER_MINUTE: "21", GATEWAY_LIMIT_PER_DAY: "601" })).toMatchObject({ GATEWAY_LIMIT_PER_MINUTE: 21, GATEWAY_LIMIT_PER_DAY: 601 });
    // The order-creation limits are not part of it.
    expect(parseEnv({ GATEWAY_CRITICAL_LIMIT_PER_MINUTE: "5" }).GATEWAY_CRITICAL_LIMIT_PER_MINUTE).toBe(5);
  });

  it("refuses an mTLS proxy header that is no header name, before anything starts", () => {
    expect(refusalOf({ MTLS_PROXY_HEADER: "X Client Verified" })).toMatch(/MTLS_PROXY_HEADER: must be an HTTP header name/);
    expect(parseEnv({ MTLS_PROXY_HEADER: "X-Client-Verify", MTLS_PROXY_HEADER_VALUE: "SUCCESS" }).MTLS_PROXY_HEADER).toBe("X-Client-Verify");
  });

  it("refuses MTLS_MODE=direct without the TLS certificate, its key and Shopify's CA, in every environment", () => {
    const production = { ...productionWithoutAddress, SHOPIFY_APP_URL: "https://crypto-checkout.example.com" };
    const files = { TLS_CERT_FILE: "/etc/tls/server.crt", TLS_KEY_FILE: "/etc/tls/server.key", MTLS_CA_FILE: "/etc/tls/shopify-ca.pem" };
    for (const base of [production, { NODE_ENV: "test" }, {}]) {
      expect(() => parseEnv({ ...base, MTLS_MODE: "direct", ...files })).not.toThrow();
      for (const missing of Object.keys(files)) {
        const given = Object.fromEntries(Object.entries(files).filter(([name]) => name !== missing));
        expect(() => parseEnv({ ...base, MTLS_MODE: "direct", ...given }), missing).toThrow(new RegExp(`${missing}: is required with MTLS_MODE=direct`));
      }
      expect(() => parseEnv({ ...base, MTLS_MODE: "direct" })).toThrow(/TLS_CERT_FILE: is required[^]*TLS_KEY_FILE: is required[^]*MTLS_CA_FILE: is required/);
    }
  });

  it("refuses a TLS certificate without its key, or a key without its certificate, in every environment", () => {
    const production = { ...productionWithoutAddress, SHOPIFY_APP_URL: "https://crypto-checkout.example.com" };
    for (const base of [production, { NODE_ENV: "development" }]) {
      expect(() => parseEnv({ ...base, TLS_CERT_FILE: "/etc/tls/server.crt" })).toThrow(/TLS_KEY_FILE: TLS_CERT_FILE and TLS_KEY_FILE go together/);
      expect(() => parseEnv({ ...base, TLS_KEY_FILE: "/etc/tls/server.key" })).toThrow(/TLS_CERT_FILE: TLS_CERT_FILE and TLS_KEY_FILE go together/);
      expect(() => parseEnv({ ...base, TLS_CERT_FILE: "/etc/tls/server.crt", TLS_KEY_FILE: "/etc/tls/server.key" })).not.toThrow();
    }
  });

  it("refuses a PostgreSQL DATABASE_URL that is no URL (an unencoded '#' in the password), naming the variable and not the password", () => {
    const password = "Tr0ub4dor#3x";
    expect(() => parseEnv({ DATABASE_URL: `postgresql://app:${password}@db.internal:5432/app` })).toThrow(ConfigurationError);
    expect(() => parseEnv({ DATABASE_URL: `postgresql://app:${password}@db.internal:5432/app` })).toThrow(/DATABASE_URL: must be a valid URL/);
    try {
      parseEnv({ DATABASE_URL: `postgresql://app:${password}@db.internal:5432/app` });
    } catch (error) {
      expect((error as Error).message).not.toContain(password);
    }
    // Encoded, it is taken.
    expect(parseEnv({ DATABASE_URL: `postgresql://app:${encodeURIComponent(password)}@db.internal:5432/app` }).DATABASE_URL).toContain("%23");
  });

  it("takes a PostgreSQL DATABASE_URL the driver reads with its host in the query (a Unix socket), with or without a user", () => {
    for (const url of ["postgresql://app:s3cret@/shop?host=/cloudsql/project:europe-west1:db", "postgresql:///shop?host=/var/run/postgresql", "postgres://app@/shop?host=/tmp"]) {
      expect(parseEnv({ DATABASE_URL: url }).DATABASE_URL).toBe(url);
    }
  });

  it("refuses in production a gateway address that is not https://", () => {
    const production = { ...productionWithoutAddress, SHOPIFY_APP_URL: "https://crypto-checkout.example.com" };
    expect(() => parseEnv({ ...production, GATEWAY_BASE_URL: "http://pos.bitnovo.com/api/v1" })).toThrow(/GATEWAY_BASE_URL: must be an https:\/\/ address in production/);
    expect(parseEnv(production).GATEWAY_BASE_URL).toBe("https://pos.bitnovo.com/api/v1");
    expect(parseEnv({ ...production, GATEWAY_BASE_URL: "https://gateway.example.com/api/v1" }).GATEWAY_BASE_URL).toBe("https://gateway.example.com/api/v1");
    // The test stacks talk to a local stand-in over plain HTTP.
    expect(parseEnv({ NODE_ENV: "test", GATEWAY_BASE_URL: "http://127.0.0.1:9/api/v1" }).GATEWAY_BASE_URL).toBe("http://127.0.0.1:9/api/v1");
  });

  it("refuses in production a proxy's proof that anyone could send: the well-known SUCCESS, or a short value, and never shows the value", () => {
    const production = { ...productionWithoutAddress, SHOPIFY_APP_URL: "https://crypto-checkout.example.com" };
    for (const value of [undefined, "SUCCESS", "short-secret-1234", `${"a".repeat(20)} ${"b".repeat(20)}`]) {
      const refusal = refusalOf({ ...production, MTLS_PROXY_HEADER_VALUE: value });
      expect(refusal, String(value)).toContain("MTLS_PROXY_HEADER_VALUE: must be a secret only the proxy sends");
      if (value && value !== "SUCCESS") expect(refusal).not.toContain(value);
    }
    const secret = randomBytes(32).toString("hex");
    expect(parseEnv({ ...production, MTLS_PROXY_HEADER_VALUE: secret }).MTLS_PROXY_HEADER_VALUE).toBe(secret);
    // The app checking the certificate itself takes no header; outside production the default stands.
    expect(() => parseEnv({ ...production, MTLS_MODE: "direct", TLS_CERT_FILE: "/c", TLS_KEY_FILE: "/k", MTLS_CA_FILE: "/ca", MTLS_PROXY_HEADER_VALUE: undefined })).not.toThrow();
    expect(parseEnv({ NODE_ENV: "test", MTLS_MODE: "proxy" }).MTLS_PROXY_HEADER_VALUE).toBe("SUCCESS");
  });

  it("refuses the development login in production", () => {
    const production = { ...productionWithoutAddress, SHOPIFY_APP_URL: "https://crypto-checkout.example.com" };
    expect(() => parseEnv(production)).not.toThrow();
    expect(() => parseEnv({ ...production, DEV_ADMIN_LOGIN: "true" })).toThrow(/DEV_ADMIN_LOGIN/);
  });

  it("takes the development login only on this machine: HOST on loopback and the app's URL local, in any environment", () => {
    const local = { NODE_ENV: "development", DEV_ADMIN_LOGIN: "true", HOST: "127.0.0.1", SHOPIFY_APP_URL: "http://localhost:3000" };
    expect(parseEnv(local).DEV_ADMIN_LOGIN).toBe(true);
    expect(parseEnv({ ...local, HOST: "::1" }).DEV_ADMIN_LOGIN).toBe(true);
    for (const host of ["0.0.0.0", "::", "192.168.1.20"]) expect(() => parseEnv({ ...local, HOST: host })).toThrow(/DEV_ADMIN_LOGIN: needs HOST on loopback/);
    // HOST unset listens on every interface.
    expect(() => parseEnv({ NODE_ENV: "test", DEV_ADMIN_LOGIN: "true" })).toThrow(/DEV_ADMIN_LOGIN: needs HOST on loopback/);
    for (const env of ["development", "test"]) {
      expect(() => parseEnv({ ...local, NODE_ENV: env, SHOPIFY_APP_URL: "https://staging.example.com" })).toThrow(/DEV_ADMIN_LOGIN: needs SHOPIFY_APP_URL on this machine/);
    }
    // Without the login, a staging set-up on a public address is fine.
    expect(() => parseEnv({ NODE_ENV: "development", HOST: "0.0.0.0", SHOPIFY_APP_URL: "https://staging.example.com" })).not.toThrow();
  });

  it("refuses to start in production without the app's public https:// address", () => {
    const production = productionWithoutAddress;
    // The development default would give the gateway and shoppers http://localhost:3000 to come back to.
    expect(() => parseEnv(production)).toThrow(/SHOPIFY_APP_URL: is required in production/);
    for (const local of ["http://crypto-checkout.example.com", "https://localhost:3000", "https://127.0.0.1", "https://app.localhost", "https://[::1]:8443", "https://0.0.0.0"]) {
      expect(() => parseEnv({ ...production, SHOPIFY_APP_URL: local }), local).toThrow(/SHOPIFY_APP_URL: must be the app's public https:\/\/ address/);
    }
    expect(parseEnv({ ...production, SHOPIFY_APP_URL: "https://pay.example.com" }).SHOPIFY_APP_URL).toBe("https://pay.example.com");
    // Development keeps its local default.
    expect(parseEnv({}).SHOPIFY_APP_URL).toBe("http://localhost:3000");
  });

  it("runs the workers on their own thread only when asked, and only on PostgreSQL", () => {
    const postgres = "postgresql://localhost:5432/app";
    expect(parseEnv({}).WORKER_THREAD).toBe(false);
    expect(parseEnv({ DATABASE_URL: postgres }).WORKER_THREAD).toBe(false);
    expect(parseEnv({ DATABASE_URL: postgres, WORKER_THREAD: "true" }).WORKER_THREAD).toBe(true);
    expect(parseEnv({ DATABASE_URL: "file:./data/app.db", WORKER_THREAD: "false" }).WORKER_THREAD).toBe(false);
    expect(() => parseEnv({ DATABASE_URL: "file:./data/app.db", WORKER_THREAD: "true" })).toThrow(/WORKER_THREAD: needs PostgreSQL/);
  });

  it("refuses an encryption key id used twice, naming the variable and never the key material", () => {
    const oldKey = randomBytes(32).toString("base64");
    const newKey = randomBytes(32).toString("base64");
    // Each stored value names its key by id: under one id, only one of the two keys would be tried.
    expect(() => parseEnv({ CREDENTIALS_ENCRYPTION_KEYS: `k1:${oldKey},k1:${newKey}` })).toThrow(ConfigurationError);
    try {
      parseEnv({ CREDENTIALS_ENCRYPTION_KEYS: `k1:${oldKey}, k2:${randomBytes(32).toString("base64")},k1:${newKey}` });
      expect.unreachable();
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toMatch(/CREDENTIALS_ENCRYPTION_KEYS: the key id "k1" is used more than once/);
      expect(message).not.toContain(oldKey);
      expect(message).not.toContain(newKey);
    }
    expect(parseEnv({ CREDENTIALS_ENCRYPTION_KEYS: `k2:${newKey},k1:${oldKey}` }).CREDENTIALS_ENCRYPTION_KEYS.map((k) => k.id)).toEqual(["k2", "k1"]);
    expect(() => createCredentialCipher([key("same"), key("same")])).toThrow(/id of its own/);
  });

  it("takes a value of only spaces as unset, as the health check does (PORT is not 0)", () => {
    expect(parseEnv({ PORT: " " }).PORT).toBe(3000);
    expect(parseEnv({ PORT: "\t", OUTBOX_CONCURRENCY: "  " }).OUTBOX_CONCURRENCY).toBe(8);
  });

  it("refuses a worker interval longer than a timer can wait (Node would run the pass every millisecond instead)", () => {
    const longest = 2 ** 31 - 1;
    expect(parseEnv({ RECONCILE_INTERVAL_MS: String(longest), OUTBOX_INTERVAL_MS: String(longest) }).RECONCILE_INTERVAL_MS).toBe(longest);
    expect(() => parseEnv({ RECONCILE_INTERVAL_MS: String(longest + 1) })).toThrow(/RECONCILE_INTERVAL_MS: must be at most 2147483647/);
    expect(() => parseEnv({ OUTBOX_INTERVAL_MS: "3000000000" })).toThrow(/OUTBOX_INTERVAL_MS: must be at most 2147483647/);
  });

  it("has working defaults for local development", () => {
    const env = parseEnv({});
    expect(env.DATABASE_URL).toBe("file:./data/app.db");
    expect(env.GATEWAY_SANDBOX_URL).toBe("http://localhost:4010/api/v1");
  });
});

describe("credentials at rest", () => {
  it("round-trips, is authenticated and bound to its context", () => {
    const cipher = createCredentialCipher([key("a")]);
    const sealed = cipher.encrypt("device-key-123456", "shop1:live:device-key");
    expect(sealed).not.toContain("device-key-123456");
    expect(cipher.decrypt(sealed, "shop1:live:device-key")).toBe("device-key-123456");
    expect(() => cipher.decrypt(sealed, "shop2:live:device-key")).toThrow();
    // One bit of the ciphertext flipped. (Changing its last base64url characters may change
    // only their unused bits, which decode to the same bytes.)
    const parts = sealed.split(":");
    const body = Buffer.from(parts.at(-1)!, "base64url");
    body[0]! ^= 1;
    const tampered = [...parts.slice(0, -1), body.toString("base64url")].join(":");
    expect(tampered).not.toBe(sealed);
    expect(() => cipher.decrypt(tampered, "shop1:live:device-key")).toThrow();
  });

  it("refuses an authentication tag shorter than the full 16 bytes", () => {
    const cipher = createCredentialCipher([key("a")]);
    const [version, keyId, iv, tag, body] = cipher.encrypt("device-key-123456", "ctx").split(":");
    // A GCM tag cut short is still checked on its first bytes by default, which a forger can guess far more easily.
    for (const bytes of [4, 8, 12, 15]) {
      const truncated = Buffer.from(tag!, "base64url").subarray(0, bytes).toString("base64url");
      expect(() => cipher.decrypt([version, keyId, iv, truncated, body].join(":"), "ctx")).toThrow(CredentialDecryptionError);
    }
    expect(cipher.decrypt([version, keyId, iv, tag, body].join(":"), "ctx")).toBe("device-key-123456");
  });

  it("rotates keys: old values still open, new values use the new key", () => {
    const old = key("old");
    const sealedOld = createCredentialCipher([old]).encrypt("secret", "ctx");
    const rotated = createCredentialCipher([key("new"), old]);
    expect(rotated.decrypt(sealedOld, "ctx")).toBe("secret");
    expect(rotated.needsRotation(sealedOld)).toBe(true);
    expect(rotated.needsRotation(rotated.encrypt("secret", "ctx"))).toBe(false);
  });

  it("masks secrets to their last four characters", () => {
    expect(maskSecret("5b0f3c1e-8d2a-4c7b-9e61-2f4a7d9c0b13")).toBe("••••••••0b13");
  });
});

describe("the logger", () => {
  it("never prints a registered secret or a secret-named field", () => {
    const lines: string[] = [];
    const logger = createLogger({ sink: (l) => lines.push(l) });
    const deviceKey = "5b0f3c1e-8d2a-4c7b-9e61-2f4a7d9c0b13";
    registerSecret(deviceKey);
    logger.info(`calling with ${deviceKey}`, { headers: { "X-Device-Id": deviceKey }, secretKeyHex: "abcdef0123", nested: { error: new Error(`bad key ${deviceKey}`) } });
    expect(lines.join("\n")).not.toContain(deviceKey);
    expect(lines.join("\n")).not.toContain("abcdef0123");
    expect(lines[0]).toContain("[redacted]");
  });

  it("keeps the last two values of a renewed secret, however often it is renewed", () => {
    const lines: string[] = [];
    const logger = createLogger({ sink: (l) => lines.push(l) });
    const before = registeredSecretCount();
    const tokens = Array.from({ length: 100 }, (_, i) => `shpat_renewed_${i}_${randomBytes(8).toString("hex")}`);
    for (const token of tokens) registerSecret(token, "shopify-access-token:renewing.myshopify.com");
    registerSecret(tokens.at(-1), "shopify-access-token:renewing.myshopify.com");
    expect(registeredSecretCount()).toBe(before + 2);
    logger.info(`sent with ${tokens.at(-2)} then ${tokens.at(-1)}`);
    expect(lines[0]).not.toContain(tokens.at(-2));
    expect(lines[0]).not.toContain(tokens.at(-1));
  });
});

describe("key rotation of stored credentials", () => {
  it("re-seals every shop's credentials with the new key and they still open", async () => {
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { applyMigrations } = await import("../../app/db/migrate.server");
    const { openDatabase } = await import("../../app/db/database.server");
    const { ensureShop, storeCredentials, rotateCredentialEncryption, credentialContext } = await import("../../app/shops/shop-credentials.server");
    const url = `file:${join(mkdtempSync(join(tmpdir(), "rotate-")), "app.db")}`;
    await applyMigrations(url);
    const db = openDatabase(url);
    const oldKey = key("old");
    const oldCipher = createCredentialCipher([oldKey]);
    const shop = await storeCredentials(db, oldCipher, await ensureShop(db, "rotate.myshopify.com"), "live", { deviceKey: "device-1234567", secretKeyHex: "ab".repeat(32) });
    const newCipher = createCredentialCipher([key("new"), oldKey]);
    expect(await rotateCredentialEncryption(db, newCipher)).toEqual({ shops: 1, sessions: 0, unreadable: [] });
    expect(await rotateCredentialEncryption(db, newCipher)).toEqual({ shops: 0, sessions: 0, unreadable: [] });
    const after = await db.shop.findUniqueOrThrow({ where: { id: shop.id } });
    expect(after.liveDeviceKeyEnc!.split(":")[1]).toBe("new");
    const stranger = createCredentialCipher([key("other")]);
    expect(() => stranger.decrypt(after.liveDeviceKeyEnc!, credentialContext(shop.id, "live", "device-key"))).toThrow();
    expect(newCipher.decrypt(after.liveSecretKeyEnc!, credentialContext(shop.id, "live", "secret-key"))).toBe("ab".repeat(32));
    await db.$disconnect();
  });
});
