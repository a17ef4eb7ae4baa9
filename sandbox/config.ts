// The sandbox's configuration: the only place in sandbox/ that reads the
// environment. Values are validated once, at start.
import { z } from "zod";

const envSchema = z.object({
  SANDBOX_PORT: z.coerce.number().int().min(0).max(65535).default(4010),
  SANDBOX_HOST: z.string().min(1).default("127.0.0.1"),
  SANDBOX_DB: z.string().min(1).default("data/sandbox.db"),
  SANDBOX_PUBLIC_URL: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//.test(u), "must be an http(s) URL")
    .optional(),
  SANDBOX_TICK_MS: z.coerce.number().int().min(10).max(600_000).default(1000),
});

export interface SandboxConfig {
  port: number;
  host: string;
  dbPath: string;
  publicUrl: string | undefined;
  tickMs: number;
}

export function loadSandboxConfig(env: Record<string, string | undefined> = process.env): SandboxConfig {
  const parsed = envSchema.safeParse({
    SANDBOX_PORT: env.SANDBOX_PORT || undefined,
    SANDBOX_HOST: env.SANDBOX_HOST || undefined,
    SANDBOX_DB: env.SANDBOX_DB || undefined,
    SANDBOX_PUBLIC_URL: env.SANDBOX_PUBLIC_URL || undefined,
    SANDBOX_TICK_MS: env.SANDBOX_TICK_MS || undefined,
  });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`Invalid sandbox configuration: ${issues}`);
  }
  const c = parsed.data;
  return {
    port: c.SANDBOX_PORT,
    host: c.SANDBOX_HOST,
    dbPath: c.SANDBOX_DB,
    publicUrl: c.SANDBOX_PUBLIC_URL?.replace(/\/+$/, ""),
    tickMs: c.SANDBOX_TICK_MS,
  };
}
