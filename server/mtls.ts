// Mutual TLS for the routes Shopify calls (payment, refund, capture and void sessions).
// Shopify authenticates those requests only with a client certificate from its Payments
// Platform CA (there is no HMAC), so this module owns the HTTPS options that ask for that
// certificate and the middleware that refuses protected paths without a verified one.
import { createHash, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import type { ServerOptions } from "node:https";
import { TLSSocket } from "node:tls";
import type { Request, RequestHandler } from "express";
import { z } from "zod";
import { API_ROUTES } from "../app/api/api-routes.server";

/** The session URLs of the payments extension (the API's Shopify routes): only Shopify may call them. */
export const SHOPIFY_MTLS_PROTECTED_PATHS: readonly string[] = API_ROUTES.filter((route) => route.caller === "shopify").map((route) => route.path);

export type MtlsMode = "off" | "direct" | "proxy";

export interface MtlsLogger {
  warn(message: string, fields?: Record<string, unknown>): void;
}

export interface TlsFiles {
  certFile: string;
  keyFile: string;
  /** The CA that client certificates must chain to (Shopify's Payments Platform CA). */
  caFile?: string;
}

export class MtlsConfigurationError extends Error {
  override name = "MtlsConfigurationError";
}

function readPem(setting: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new MtlsConfigurationError(`${setting} (${file}) cannot be read: ${code}`);
  }
}

/**
 * HTTPS server options. With a CA the server asks every client for a certificate but
 * does not end the handshake when none (or an untrusted one) is given: browsers must
 * still reach the admin and the shopper's return pages, and Shopify-only paths answer
 * a readable 403 from `shopifyMtlsGuard` instead of an opaque handshake failure.
 */
export function createTlsServerOptions(files: TlsFiles): ServerOptions {
  const options: ServerOptions = {
    cert: readPem("TLS_CERT_FILE", files.certFile),
    key: readPem("TLS_KEY_FILE", files.keyFile),
    minVersion: "TLSv1.2",
  };
  if (files.caFile) {
    options.ca = readPem("MTLS_CA_FILE", files.caFile);
    options.requestCert = true;
    options.rejectUnauthorized = false;
  }
  return options;
}

/** The HTTPS options the settings ask for, their files read; null when the app serves plain HTTP. Throws MtlsConfigurationError when a file cannot be read. */
export function tlsOptionsFor(settings: { TLS_CERT_FILE?: string | undefined; TLS_KEY_FILE?: string | undefined; MTLS_CA_FILE?: string | undefined }): ServerOptions | null {
  if (!settings.TLS_CERT_FILE || !settings.TLS_KEY_FILE) return null;
  return createTlsServerOptions({ certFile: settings.TLS_CERT_FILE, keyFile: settings.TLS_KEY_FILE, ...(settings.MTLS_CA_FILE ? { caFile: settings.MTLS_CA_FILE } : {}) });
}

export interface ClientCertificateSummary {
  subjectCN: string | null;
  issuerCN: string | null;
  fingerprint256: string | null;
}

function commonName(value: string | string[] | undefined): string | null {
  const first = Array.isArray(value) ? value[0] : value;
  // The name is chosen by whoever made the certificate: keep log lines bounded.
  return first === undefined ? null : first.slice(0, 200);
}

/**
 * What a log line may say about the peer's certificate: names and fingerprint only,
 * never the certificate itself. Null when the connection is not TLS or no certificate
 * was presented.
 */
export function describeClientCertificate(req: Pick<Request, "socket">): ClientCertificateSummary | null {
  const socket = req.socket;
  if (!(socket instanceof TLSSocket)) return null;
  const certificate = socket.getPeerCertificate();
  // Node returns an empty object (or null once the socket is gone) when there is no certificate.
  if (!certificate || !certificate.fingerprint256) return null;
  return {
    subjectCN: commonName(certificate.subject?.CN),
    issuerCN: commonName(certificate.issuer?.CN),
    fingerprint256: certificate.fingerprint256,
  };
}

const guardOptionsSchema = z.object({
  mode: z.enum(["off", "direct", "proxy"]),
  proxyHeader: z
    .string()
    .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "must be an HTTP header name")
    .transform((name) => name.toLowerCase()),
  proxyHeaderValue: z.string().min(1),
  protectedPaths: z
    .array(z.string().startsWith("/", "must start with /"))
    .min(1, "at least one protected path"),
});

export interface ShopifyMtlsGuardOptions {
  mode: MtlsMode;
  /** Header set by the TLS-terminating proxy, e.g. "x-client-cert-verified". */
  proxyHeader: string;
  /** The header's value when the proxy verified the certificate, e.g. "SUCCESS". */
  proxyHeaderValue: string;
  /** Path prefixes reserved for Shopify; see `SHOPIFY_MTLS_PROTECTED_PATHS`. */
  protectedPaths: readonly string[];
  logger?: MtlsLogger;
}

/** Decodes percent-escapes, also double ones, leaving malformed escapes as they are. */
function decodeEscapes(text: string): string {
  let current = text;
  for (let round = 0; round < 4; round++) {
    const next = current.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
    if (next === current) break;
    current = next;
  }
  return current;
}

/**
 * The path in a form at least as broad as what the router behind us accepts: Remix
 * decodes escapes and matches routes case-insensitively, and URL parsing resolves dot
 * segments and backslashes. The guard also folds double escapes and repeated slashes and
 * compares upper-cased text, so every spelling that could reach a protected route is
 * checked; the few extra spellings it catches reach no route anyway.
 */
function comparablePath(rawUrl: string): string {
  const target = rawUrl.split(/[?#]/, 1)[0] ?? "";
  const decoded = decodeEscapes(target).replace(/\\/g, "/");
  const segments: string[] = [];
  for (const segment of decoded.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") segments.pop();
    else segments.push(segment);
  }
  const trailing = decoded.endsWith("/") && segments.length > 0 ? "/" : "";
  return `/${segments.join("/")}${trailing}`.toUpperCase();
}

function comparablePrefix(prefix: string): string {
  const path = comparablePath(prefix);
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

type Refusal = { reason: string; message: string };

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const parsed = z.union([z.string(), z.array(z.string())]).optional().safeParse(headers[name]);
  if (!parsed.success || parsed.data === undefined) return undefined;
  // A repeated header is ambiguous: it is never a proof of verification.
  return Array.isArray(parsed.data) ? (parsed.data.length === 1 ? parsed.data[0] : undefined) : parsed.data;
}

/**
 * Express middleware, mounted before the Remix handler, that lets a request to a
 * protected path through only when Shopify's client certificate was verified:
 * - "direct": this process terminates TLS; the certificate must chain to the CA given
 *   to `createTlsServerOptions` (`socket.authorized`).
 * - "proxy": a proxy terminates TLS and reports its verification in a header. The
 *   proxy must set that header on every request it forwards, overwriting whatever the
 *   client sent, and the app must be reachable only through the proxy.
 * - "off": no check (local development only; the configuration refuses it in production).
 * Other paths always pass.
 */
export function shopifyMtlsGuard(options: ShopifyMtlsGuardOptions): RequestHandler {
  const parsed = guardOptionsSchema.safeParse(options);
  if (!parsed.success) {
    const details = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
    throw new MtlsConfigurationError(`Invalid mTLS guard options: ${details}`);
  }
  const { mode, proxyHeader, proxyHeaderValue } = parsed.data;
  const prefixes = parsed.data.protectedPaths.map(comparablePrefix);
  const logger = options.logger;

  const isProtected = (req: Request): boolean => {
    const target = req.originalUrl || req.url || "/";
    // A target that is not a path ("http://host:99999/payments/session", "*"): Shopify never
    // sends one, and parsers read it differently (WHATWG URL refuses a port that the router's
    // parser takes), so it is protected whatever it names rather than read one way here and
    // another behind.
    if (!target.startsWith("/")) return true;
    const path = comparablePath(target);
    return prefixes.some((prefix) => path.startsWith(prefix));
  };

  const check = (req: Request): Refusal | null => {
    if (mode === "off") return null;
    if (mode === "proxy") {
      const value = headerValue(req.headers, proxyHeader);
      if (value !== undefined && sameSecret(value, proxyHeaderValue)) return null;
      return {
        reason: value === undefined ? "proxy_header_missing" : "proxy_header_not_verified",
        message: "This endpoint only accepts requests from Shopify authenticated with a client certificate, and the TLS proxy did not verify one.",
      };
    }
    const socket = req.socket;
    if (socket instanceof TLSSocket && socket.authorized === true) return null;
    const presented = describeClientCertificate(req) !== null;
    return {
      reason: !(socket instanceof TLSSocket) ? "not_tls" : presented ? "certificate_not_trusted" : "no_certificate",
      message: presented
        ? "This endpoint only accepts requests from Shopify: the client certificate presented is not issued by the trusted CA."
        : "This endpoint only accepts requests from Shopify authenticated with a client certificate, and none was presented.",
    };
  };

  return (req, res, next) => {
    if (!isProtected(req)) {
      next();
      return;
    }
    const refusal = check(req);
    if (!refusal) {
      next();
      return;
    }
    const socket = req.socket;
    logger?.warn("mTLS: refused a request to a Shopify-only path", {
      mode,
      reason: refusal.reason,
      method: req.method,
      path: (req.originalUrl || req.url || "").split("?", 1)[0]?.slice(0, 200),
      remoteAddress: socket.remoteAddress,
      tlsError: socket instanceof TLSSocket && socket.authorizationError ? String(socket.authorizationError) : undefined,
      certificate: describeClientCertificate(req),
    });
    res.status(403).json({ error: "client_certificate_required", message: refusal.message });
  };
}

/**
 * Compares a header with the configured value in constant time, like every other secret the
 * app checks: where the proxy proves itself with a shared value, its length and its prefix
 * must not show in the answer's timing. Digests make both sides the same length.
 */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();
  return timingSafeEqual(digest(given), digest(expected));
}
