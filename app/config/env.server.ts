// The only module that reads process.env. Every setting is validated once, with zod; a
// missing or malformed variable stops start-up with a message that names it.
import { z } from "zod";
import { DEFAULT_STATEMENT_TIMEOUT_MS, databaseKind } from "../db/database-url";
import { QUOTA_RESERVE } from "../gateway/quota";
import { DEFAULT_CUSTOMER_DATA_RETENTION_DAYS, DEFAULT_RETENTION_DAYS, MIN_CUSTOMER_DATA_RETENTION_DAYS, MIN_RETENTION_DAYS } from "../payments/retention";

// A fixed key for local development and tests only; production must set CREDENTIALS_ENCRYPTION_KEYS.
const DEV_ENCRYPTION_KEY = "dev:ZGV2LW9ubHkta2V5LW5ldmVyLWluLXByb2R1Y3Rpb24=";
export interface EncryptionKey {
  id: string;
  key: Uint8Array;
}

// A timer waits at most 2^31-1 ms (about 24.8 days): Node runs a longer one after 1 ms, which
// would make a worker's pass run back to back.
const MAX_TIMER_MS = 2 ** 31 - 1;
const TIMER_LIMIT = `must be at most ${MAX_TIMER_MS} (about 24.8 days, the longest a timer waits)`;

// The quota's limits are compared in the database as 32-bit integers (PostgreSQL's INTEGER).
const MAX_LIMIT = 2 ** 31 - 1;
const LIMIT_TOO_HIGH = `must be at most ${MAX_LIMIT}`;

const booleanText = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");

/** Base64 (standard or URL-safe alphabet), its padding only at the end. */
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** The entries of a CREDENTIALS_ENCRYPTION_KEYS value, each split at its ":" (an id, then its key material, as written). */
function keyEntries(value: string | undefined): string[][] {
  return (value ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => entry.split(":"));
}

const encryptionKeys = z
  .string()
  .min(1)
  .transform((text, ctx) => {
    const keys = keyEntries(text).map((parts) => {
      if (parts.length > 2) {
        // "new:<key>:old:<key>" would otherwise be read as the first key alone: every value sealed
        // with the others would be unreadable, and nothing said.
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `an entry holds ${parts.length - 1} ":": entries are separated by "," (<id>:<key>,<id>:<key>)` });
        return null;
      }
      const [id, material = ""] = parts;
      // Strict base64: Buffer.from skips characters it does not know, so a mistyped key could decode to 32 other bytes.
      const bytes: Uint8Array = BASE64.test(material) ? new Uint8Array(Buffer.from(material, "base64")) : new Uint8Array(0);
      if (!id || !/^[A-Za-z0-9_-]{1,32}$/.test(id) || bytes.length !== 32) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: "each entry must be <id>:<32 bytes in base64>" });
        return null;
      }
      return { id, key: bytes };
    });
    if (keys.length === 0) ctx.addIssue({ code: z.ZodIssueCode.custom, message: "at least one key" });
    // Each value names the key that sealed it by id: two keys under one id would leave every
    // value sealed with the other one unreadable. (Only the id is named, never key material.)
    const ids = keys.flatMap((k) => (k ? [k.id] : []));
    for (const id of new Set(ids.filter((id, i) => ids.indexOf(id) !== i))) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: `the key id "${id}" is used more than once: give each key an id of its own` });
    }
    return keys.filter((k): k is EncryptionKey => k !== null);
  });

const schema = z
  .object({
    NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    HOST: z.string().default("0.0.0.0"),
    LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
    SHOPIFY_API_KEY: z.string().min(1).optional(),
    SHOPIFY_API_SECRET: z.string().min(1).optional(),
    // The app's client secret before a rotation: Shopify's webhooks signed with it (until it is
    // revoked) and the shoppers' links signed with it (stored in the gateway's open orders as
    // their return URLs) are still taken.
    SHOPIFY_API_SECRET_PREVIOUS: z.string().min(1).optional(),
    SHOPIFY_APP_URL: z.string().url().default("http://localhost:3000"),
    SCOPES: z.string().default("write_payment_gateways,write_payment_sessions"),
    SHOP_CUSTOM_DOMAIN: z.string().optional(),
    DATABASE_URL: z
      .string()
      .regex(/^(file:|postgres(ql)?:\/\/)/, "must be file:<path> (SQLite) or postgresql://...")
      // A PostgreSQL URL is read by the driver as a URL: one that is not (a password with an
      // unencoded "#", "/" or "@") would stop the start later, without naming this variable.
      .refine((url) => url.startsWith("file:") || isDriverUrl(url), "must be a valid URL: percent-encode the user name's and password's special characters")
      .default("file:./data/app.db"),
    // PostgreSQL: the connections one database client opens at most, shared by the Prisma client
    // and the hot paths' plain statements (the worker thread, when on, opens its own).
    DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
    // PostgreSQL: how long one statement may run, waiting on locks included, before the server
    // cancels it (app/db/database.server.ts).
    DATABASE_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(DEFAULT_STATEMENT_TIMEOUT_MS),
    GATEWAY_BASE_URL: z.string().url().default("https://pos.bitnovo.com/api/v1"),
    GATEWAY_SANDBOX_URL: z.string().url().default("http://localhost:4010/api/v1"),
    CREDENTIALS_ENCRYPTION_KEYS: encryptionKeys.optional(),
    SHOPIFY_PAYMENTS_APPS_ENDPOINT: z.string().url().optional(),
    PAYMENTS_API_VERSION: z.string().regex(/^\d{4}-\d{2}$/).default("2026-04"),
    MTLS_MODE: z.enum(["off", "direct", "proxy"]).default("off"),
    TLS_CERT_FILE: z.string().optional(),
    TLS_KEY_FILE: z.string().optional(),
    MTLS_CA_FILE: z.string().optional(),
    // As the mTLS guard takes it: checked here, before anything starts.
    MTLS_PROXY_HEADER: z
      .string()
      .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "must be an HTTP header name (letters, digits and - but no spaces)")
      .default("x-client-cert-verified"),
    MTLS_PROXY_HEADER_VALUE: z.string().min(1).default("SUCCESS"),
    DEV_ADMIN_LOGIN: booleanText.default("false"),
    WORKERS: booleanText.default("true"),
    // How long a stopping instance keeps serving, its /healthz answering 503, before it stops
    // taking connections: the time a load balancer needs to take it out (server/app.ts).
    // 5 s in production, none elsewhere.
    SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(30_000).optional(),
    // The workers on their own thread, so their CPU never delays a request (PostgreSQL only:
    // SQLite allows one connection per process). BENCHMARKS.md has what it changed here.
    WORKER_THREAD: booleanText.default("false"),
    RECONCILE_INTERVAL_MS: z.coerce.number().int().min(100).max(MAX_TIMER_MS, TIMER_LIMIT).default(60_000),
    OUTBOX_INTERVAL_MS: z.coerce.number().int().min(10).max(MAX_TIMER_MS, TIMER_LIMIT).default(1_000),
    // Shopify calls one instance's outbox makes at once (one payment's messages always go in order).
    OUTBOX_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(8),
    WEBHOOK_MAX_NONCE_AGE_SECONDS: z.coerce.number().int().min(1).max(3600).default(20),
    // How far ahead of this instance's clock a gateway webhook's nonce may be: the gateway's
    // clock may run ahead, and every webhook it signs would otherwise be refused (it sends each
    // once). The replay guard is the (shop, signature) row, kept for days, not this window.
    WEBHOOK_MAX_NONCE_LEAD_SECONDS: z.coerce.number().int().min(0).max(3600).default(5),
    // Days processed webhooks, refused webhooks and delivered Shopify calls are kept
    // (app/payments/retention.ts): never fewer than the health page's 7 days, which is also far
    // beyond the oldest webhook nonce accepted above, so deleting a webhook never lets a replay in.
    RETENTION_DAYS: z.coerce
      .number()
      .int()
      .min(MIN_RETENTION_DAYS, `must be at least ${MIN_RETENTION_DAYS} (the health page shows the last 7 days)`)
      .max(3650)
      .default(DEFAULT_RETENTION_DAYS),
    // Days a shopper's personal data is kept after their payment ended, and a data request's
    // report after it came (app/payments/retention.ts): never fewer than the 30 days a merchant
    // has to answer a data request.
    CUSTOMER_DATA_RETENTION_DAYS: z.coerce
      .number()
      .int()
      .min(MIN_CUSTOMER_DATA_RETENTION_DAYS, `must be at least ${MIN_CUSTOMER_DATA_RETENTION_DAYS} (a data request must be answerable for 30 days)`)
      .max(3650)
      .default(DEFAULT_CUSTOMER_DATA_RETENTION_DAYS),
    // The gateway's throttles per device (SPEC.md's Limits); raise them only if the gateway raised yours.
    // Above the calls kept free for new orders, which reconciliation never spends: at them, it
    // would read once a minute at most.
    GATEWAY_LIMIT_PER_MINUTE: z.coerce
      .number()
      .int()
      .min(QUOTA_RESERVE.minute + 1, `must be more than the ${QUOTA_RESERVE.minute} calls a minute kept free for new orders (reconciliation reads only above them)`)
      .max(MAX_LIMIT, LIMIT_TOO_HIGH)
      .default(60),
    GATEWAY_LIMIT_PER_DAY: z.coerce
      .number()
      .int()
      .min(QUOTA_RESERVE.day + 1, `must be more than the ${QUOTA_RESERVE.day} calls a day kept free for new orders (reconciliation reads only above them)`)
      .max(MAX_LIMIT, LIMIT_TOO_HIGH)
      .default(2000),
    GATEWAY_CRITICAL_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(MAX_LIMIT, LIMIT_TOO_HIGH).default(15),
    GATEWAY_CRITICAL_LIMIT_PER_DAY: z.coerce.number().int().min(1).max(MAX_LIMIT, LIMIT_TOO_HIGH).default(200),
  });

/** A raw switch that booleanText reads as on. */
const isOn = (value: string | undefined): boolean => booleanText.safeParse(value).data === true;

/** Rules across variables, in every environment. */
function combinationIssues(raw: Record<string, string | undefined>): string[] {
  const issues: string[] = [];
  // The development login opens any shop's admin without Shopify: only on this machine.
  if (isOn(raw.DEV_ADMIN_LOGIN)) {
    if (!LOOPBACK_HOSTS.test(raw.HOST ?? "0.0.0.0")) issues.push("  DEV_ADMIN_LOGIN: needs HOST on loopback (127.0.0.1, ::1 or localhost): it opens every shop's admin without Shopify");
    if (raw.SHOPIFY_APP_URL && !isLocalHostname(hostnameOf(raw.SHOPIFY_APP_URL))) issues.push("  DEV_ADMIN_LOGIN: needs SHOPIFY_APP_URL on this machine (localhost or 127.0.0.1): it opens every shop's admin without Shopify");
  }
  if (isOn(raw.WORKER_THREAD) && databaseKind(raw.DATABASE_URL ?? "") !== "postgresql") issues.push("  WORKER_THREAD: needs PostgreSQL (SQLite allows one connection per process)");
  if (raw.MTLS_MODE === "direct") {
    // The app itself checks Shopify's certificate: without HTTPS, or without the CA to ask for a
    // client certificate, every call Shopify makes would be refused 403, and nothing said at start.
    for (const name of ["TLS_CERT_FILE", "TLS_KEY_FILE", "MTLS_CA_FILE"]) {
      if (!raw[name]) issues.push(`  ${name}: is required with MTLS_MODE=direct (the app serves HTTPS and checks Shopify's client certificate)`);
    }
  } else if (Boolean(raw.TLS_CERT_FILE) !== Boolean(raw.TLS_KEY_FILE)) {
    // The app serves HTTPS only with both: one alone would quietly leave it on plain HTTP.
    issues.push(`  ${raw.TLS_CERT_FILE ? "TLS_KEY_FILE" : "TLS_CERT_FILE"}: TLS_CERT_FILE and TLS_KEY_FILE go together (HTTPS needs both)`);
  }
  return issues;
}

/**
 * Whether the PostgreSQL driver (pg-connection-string) reads the URL: as a URL, or, as the driver
 * retries it, with a placeholder host when the host is empty and given as a query parameter
 * (a Unix socket: postgresql://user:password@/db?host=/cloudsql/...).
 */
function isDriverUrl(url: string): boolean {
  return URL.canParse(url) || (url.includes("@/") && URL.canParse(url.replace("@/", "@localhost/")));
}

const LOCAL_HOSTS = /^(localhost|.*\.localhost|127(\.\d{1,3}){3}|0\.0\.0\.0|\[::1?\])$/i;
/** Addresses a server listens on that no other machine reaches. */
const LOOPBACK_HOSTS = /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i;

/**
 * Whether a URL's host is this machine's own, however it is written: with the root's trailing
 * dot ("localhost."), or as an IPv4 address mapped in IPv6 ([::ffff:127.0.0.1], which the URL
 * parser writes [::ffff:7f00:1]).
 */
function isLocalHostname(hostname: string): boolean {
  const host = hostname.replace(/\.+$/, "");
  return LOCAL_HOSTS.test(host) || /^\[::ffff:(7f[0-9a-f]{2}:[0-9a-f]{1,4}|0:0)\]$/i.test(host);
}

function hostnameOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
}

/** An https:// address others can reach: not this machine's own. */
function isPublicHttps(value: string): boolean {
  return isHttps(value) && !isLocalHostname(new URL(value).hostname);
}

/** An address the app's paths can be appended to: no query, no fragment (not even an empty one), no credentials. */
function isPlainAddress(value: string): boolean {
  const url = new URL(value);
  return !value.includes("?") && !value.includes("#") && url.username === "" && url.password === "";
}

function isHttps(value: string): boolean {
  try {
    return new URL(value).protocol === "https:";
  } catch {
    return false;
  }
}

/** The ids of the entries of a CREDENTIALS_ENCRYPTION_KEYS value whose key is the development one, under any id. */
function developmentKeyIds(value: string | undefined): string[] {
  const development = Buffer.from(DEV_ENCRYPTION_KEY.split(":")[1]!, "base64");
  return keyEntries(value)
    .filter(([, material]) => material !== undefined && Buffer.from(material, "base64").equals(development))
    .map(([id]) => id ?? "");
}

/** Fewer distinct byte values than this in 32 bytes is not a random key (a random one has about 30). */
const MIN_DISTINCT_KEY_BYTES = 16;

/** The ids of the well-formed CREDENTIALS_ENCRYPTION_KEYS entries whose 32 bytes hold too few distinct values to be secret. */
function weakKeyIds(value: string | undefined): string[] {
  return keyEntries(value)
    .filter(([, material]) => {
      if (material === undefined) return false;
      const bytes = Buffer.from(material, "base64");
      return bytes.length === 32 && new Set(bytes).size < MIN_DISTINCT_KEY_BYTES;
    })
    .map(([id]) => id ?? "");
}

/** A proxy's proof of a verified Shopify certificate in production: a secret, not a status word. */
const PROXY_PROOF = /^[\x21-\x7e]{32,}$/;

/** Production rules, checked on the raw values so every problem is reported at once. */
function productionIssues(raw: Record<string, string | undefined>): string[] {
  if (raw.NODE_ENV !== "production") return [];
  const issues: string[] = [];
  for (const name of ["SHOPIFY_API_KEY", "SHOPIFY_API_SECRET", "CREDENTIALS_ENCRYPTION_KEYS"]) {
    if (!raw[name]) issues.push(`  ${name}: is required in production`);
  }
  // Where Shopify, the gateway's notifications and shoppers' return links reach the app.
  if (!raw.SHOPIFY_APP_URL) issues.push("  SHOPIFY_APP_URL: is required in production (the app's public https:// address)");
  else if (!isPublicHttps(raw.SHOPIFY_APP_URL)) issues.push("  SHOPIFY_APP_URL: must be the app's public https:// address in production, not a local one");
  else if (!isPlainAddress(raw.SHOPIFY_APP_URL)) {
    // The app appends its paths to it (notification URLs, return links): after a query or a
    // fragment they would name the home page, and credentials would go to the gateway and shoppers.
    issues.push("  SHOPIFY_APP_URL: must be an address without a query, a fragment or a user name and password (the app appends its paths to it)");
  }
  const developmentIds = developmentKeyIds(raw.CREDENTIALS_ENCRYPTION_KEYS);
  for (const id of developmentIds) {
    issues.push(`  CREDENTIALS_ENCRYPTION_KEYS: the key "${id}" is the development key, published with the source: generate a key of your own`);
  }
  // An all-zero key, or one byte repeated, opens every stored credential to anyone who guesses it.
  for (const id of weakKeyIds(raw.CREDENTIALS_ENCRYPTION_KEYS).filter((id) => !developmentIds.includes(id))) {
    issues.push(`  CREDENTIALS_ENCRYPTION_KEYS: the key "${id}" has too few distinct bytes to be secret: generate one with openssl rand -base64 32`);
  }
  // Every call to the gateway carries a shop's device key: never in clear.
  if (raw.GATEWAY_BASE_URL && !isHttps(raw.GATEWAY_BASE_URL)) {
    issues.push("  GATEWAY_BASE_URL: must be an https:// address in production (every gateway call carries a device key)");
  }
  if (isOn(raw.DEV_ADMIN_LOGIN)) issues.push("  DEV_ADMIN_LOGIN: cannot be enabled in production");
  if (raw.SHOPIFY_PAYMENTS_APPS_ENDPOINT) issues.push("  SHOPIFY_PAYMENTS_APPS_ENDPOINT: is for local development only");
  if (!raw.MTLS_MODE || raw.MTLS_MODE === "off") {
    issues.push("  MTLS_MODE: must be direct or proxy in production (Shopify calls the payment routes with mTLS)");
  }
  // The header is the only proof that Shopify called: a well-known value (the default SUCCESS,
  // nginx's $ssl_client_verify) is one anyone who reaches the app's port past the proxy can send.
  if (raw.MTLS_MODE === "proxy" && !PROXY_PROOF.test(raw.MTLS_PROXY_HEADER_VALUE ?? "")) {
    issues.push(
      "  MTLS_PROXY_HEADER_VALUE: must be a secret only the proxy sends with MTLS_MODE=proxy in production, at least 32 visible characters (openssl rand -hex 32), not SUCCESS, which anyone who reaches the app's port can send: see server/MTLS.md",
    );
  }
  return issues;
}

export type AppEnv = Omit<z.infer<typeof schema>, "CREDENTIALS_ENCRYPTION_KEYS" | "SHOPIFY_API_KEY" | "SHOPIFY_API_SECRET" | "SHUTDOWN_GRACE_MS"> & {
  SHOPIFY_API_KEY: string;
  SHOPIFY_API_SECRET: string;
  CREDENTIALS_ENCRYPTION_KEYS: EncryptionKey[];
  SHUTDOWN_GRACE_MS: number;
};

/** A production instance's shutdown grace when SHUTDOWN_GRACE_MS is not set. */
const PRODUCTION_SHUTDOWN_GRACE_MS = 5_000;

export class ConfigurationError extends Error {
  override name = "ConfigurationError";
}

/** Parses an environment (process.env by default); throws a ConfigurationError naming each bad variable. */
export function parseEnv(source: Record<string, string | undefined> = process.env): AppEnv {
  // Empty, or only spaces, is unset (as server/healthcheck.mjs reads PORT): " " is no port 0.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v.trim() !== ""));
  const result = schema.safeParse(cleaned);
  const lines = [
    ...(result.success ? [] : result.error.issues.map((issue) => `  ${issue.path.join(".") || "(environment)"}: ${issue.message}`)),
    ...combinationIssues(cleaned),
    ...productionIssues(cleaned),
  ];
  if (!result.success || lines.length > 0) {
    throw new ConfigurationError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const env = result.data;
  return {
    ...env,
    SHOPIFY_API_KEY: env.SHOPIFY_API_KEY ?? "dev-api-key",
    SHOPIFY_API_SECRET: env.SHOPIFY_API_SECRET ?? "dev-api-secret-not-for-production",
    CREDENTIALS_ENCRYPTION_KEYS: env.CREDENTIALS_ENCRYPTION_KEYS ?? encryptionKeys.parse(DEV_ENCRYPTION_KEY),
    SHUTDOWN_GRACE_MS: env.SHUTDOWN_GRACE_MS ?? (env.NODE_ENV === "production" ? PRODUCTION_SHUTDOWN_GRACE_MS : 0),
  };
}

let cached: AppEnv | undefined;

/** The process's configuration, parsed on first use. */
export function env(): AppEnv {
  cached ??= parseEnv();
  return cached;
}

/** Tests and the dev runner set configuration explicitly instead of through process.env. */
export function setEnvForProcess(overrides: Record<string, string | undefined>): AppEnv {
  cached = parseEnv({ ...process.env, ...overrides });
  return cached;
}
