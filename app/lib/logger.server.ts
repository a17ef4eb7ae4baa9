// Structured JSON logger. Secrets never reach the output: fields whose names look like
// secrets are replaced, and every value registered with `registerSecret` is scrubbed from
// all strings (messages, error texts, nested fields) before a line is written.
export type LogFields = Record<string, unknown>;
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

type Level = "debug" | "info" | "warn" | "error" | "silent";
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
const SECRET_FIELD = /(secret|token|password|passwd|authorization|cookie|device_?key|devicekey|api_?key|x-device-id|signature|credential)/i;
const REDACTED = "[redacted]";
interface SecretRegistry {
  known: Set<string>;
  /** Secrets that replace one another (a shop's renewed access tokens): the latest few of each slot. */
  slotted: Map<string, string[]>;
}
// One registry per process, shared by every copy of this module: the production server loads
// it itself and again inside the Remix build, and a secret either copy registers must be
// scrubbed from the lines of both.
const registries = globalThis as unknown as Record<symbol, SecretRegistry | undefined>;
const registry: SecretRegistry = (registries[Symbol.for("cryptopay-checkout.logger.secrets")] ??= { known: new Set(), slotted: new Map() });
const knownSecrets = registry.known;
const slottedSecrets = registry.slotted;
/** A slot keeps its current value and the one before, which a call still in flight may use. */
const VALUES_PER_SLOT = 2;

/**
 * Remember a secret value (a device key, a Secret Key, an access token) so no log line ever
 * shows it. Values given a `slot` replace one another: a token renewed every hour leaves the
 * scrubber with its last two values, not one more for every hour the process runs (the older
 * ones have expired or been spent). Values without a slot are kept for good.
 */
export function registerSecret(value: string | null | undefined, slot?: string): void {
  if (!value || value.length < 6) return;
  if (slot === undefined) {
    knownSecrets.add(value);
    return;
  }
  const values = slottedSecrets.get(slot) ?? [];
  if (values.includes(value)) return;
  slottedSecrets.set(slot, [...values, value].slice(-VALUES_PER_SLOT));
}

/** How many secret values the scrubber holds. */
export function registeredSecretCount(): number {
  let count = knownSecrets.size;
  for (const values of slottedSecrets.values()) count += values.length;
  return count;
}

function scrubOne(text: string, secret: string): string {
  return text.includes(secret) ? text.split(secret).join(REDACTED) : text;
}

function scrubText(text: string): string {
  let out = text;
  for (const secret of knownSecrets) out = scrubOne(out, secret);
  for (const values of slottedSecrets.values()) for (const secret of values) out = scrubOne(out, secret);
  return out;
}

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6) return "[deep]";
  if (typeof value === "string") return scrubText(value);
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Error) {
    return { name: value.name, message: scrubText(value.message), ...(value.cause ? { cause: redact(value.cause, depth + 1) } : {}) };
  }
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = SECRET_FIELD.test(k) ? REDACTED : redact(v, depth + 1);
    return out;
  }
  return value;
}

export type LogSink = (line: string) => void;

export function createLogger(options: { level?: Level; sink?: LogSink; fields?: LogFields } = {}): Logger {
  const level = options.level ?? "info";
  const sink: LogSink = options.sink ?? ((line) => process.stdout.write(line + "\n"));
  const base = options.fields ?? {};
  const write = (lvl: Exclude<Level, "silent">, message: string, fields?: LogFields) => {
    if (order[lvl] < order[level]) return;
    const record = redact({ time: new Date().toISOString(), level: lvl, msg: message, ...base, ...fields });
    sink(JSON.stringify(record));
  };
  return {
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
    child: (fields) => createLogger({ level, sink, fields: { ...base, ...fields } }),
  };
}

/** A logger that writes nothing, for tests that do not look at logs. */
export const silentLogger: Logger = createLogger({ level: "silent" });
