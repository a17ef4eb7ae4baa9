// The plumbing of the machine-facing API (api-routes.server.ts), free of any web framework:
// a request is its headers, its path's parameters and its body's chunks; an answer is a
// status, a JSON body and headers. Bodies are read bounded, and every refusal is a 4xx
// with a reason.
import type { ZodError } from "zod";
import { jsonHeaders } from "~/lib/http.server";
import { JSON_FLAW_MESSAGES, jsonFlaw } from "~/lib/json-flaw";

export const MAX_JSON_BODY_BYTES = 64 * 1024;
export { MAX_JSON_DEPTH } from "~/lib/json-flaw";

export interface ApiRequest {
  /** A header's value (the name in any case), or null when it is absent. */
  header(name: string): string | null;
  /** The path's named segments, decoded. */
  params: Readonly<Record<string, string | undefined>>;
  /** The body's chunks as they arrive: read once, through readBody or readJsonBody. */
  body: AsyncIterable<Uint8Array>;
}

export interface ApiAnswer {
  status: number;
  /** Sent as JSON; null sends no body. */
  body: unknown;
  headers?: Record<string, string>;
}

export function apiError(status: number, error: string, message: string, extra: Record<string, unknown> = {}): ApiAnswer {
  return { status, body: { error, message, ...extra } };
}

export function zodProblem(error: ZodError): { message: string; fields: Record<string, string> } {
  const fields: Record<string, string> = {};
  for (const issue of error.issues.slice(0, 20)) fields[issue.path.join(".") || "(body)"] = issue.message;
  return { message: "The request does not have the expected shape.", fields };
}

export const methodNotAllowed = (allowed: string): ApiAnswer => ({ ...apiError(405, "method_not_allowed", `Use ${allowed}.`), headers: { allow: allowed } });

/** The status, headers and text to write for an answer: JSON with its length, never cached. */
export function encodeAnswer(answer: ApiAnswer): { status: number; headers: Record<string, string>; text: string | null } {
  const text = answer.body === null ? null : JSON.stringify(answer.body);
  return { status: answer.status, headers: { ...jsonHeaders(text), ...answer.headers }, text };
}

export type BodyRead = { ok: true; bytes: Uint8Array } | { ok: false; answer: ApiAnswer };

/** Past the limit the rest of a body is read and dropped up to this size, so the connection stays usable and the client reads the 413. */
export const DRAIN_LIMIT_BYTES = 8 * 1024 * 1024;

/** Reads at most `maxBytes` of the body; a larger one is refused (413) and not kept. */
export async function readBody(request: ApiRequest, maxBytes = MAX_JSON_BODY_BYTES): Promise<BodyRead> {
  const tooLarge = (): BodyRead => ({ ok: false, answer: apiError(413, "body_too_large", `The body must be at most ${maxBytes} bytes.`) });
  // Read by hand rather than with for-await: leaving that loop early would destroy the stream
  // (and the connection) before the 413 is written.
  const chunks = request.body[Symbol.asyncIterator]();
  const drain = async (already: number) => {
    for (let size = already; size <= DRAIN_LIMIT_BYTES; ) {
      const next = await chunks.next();
      if (next.done) return;
      size += next.value.byteLength;
    }
  };
  const declared = Number(request.header("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) {
    await drain(0);
    return tooLarge();
  }
  const kept: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const next = await chunks.next();
    if (next.done) break;
    size += next.value.byteLength;
    if (size > maxBytes) {
      await drain(size);
      return tooLarge();
    }
    kept.push(next.value);
  }
  return { ok: true, bytes: kept.length === 1 ? kept[0]! : Buffer.concat(kept, size) };
}

export type JsonRead = { ok: true; value: unknown } | { ok: false; answer: ApiAnswer };

/** A JSON body: content type checked, size bounded, parse errors answered with 400/415. */
export async function readJsonBody(request: ApiRequest, maxBytes = MAX_JSON_BODY_BYTES): Promise<JsonRead> {
  if (!/^application\/json\b/i.test(request.header("content-type") ?? "")) {
    return { ok: false, answer: apiError(415, "unsupported_media_type", "Send the body as application/json.") };
  }
  const body = await readBody(request, maxBytes);
  if (!body.ok) return body;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body.bytes));
  } catch {
    return { ok: false, answer: apiError(400, "malformed_json", "The body is not valid UTF-8 JSON.") };
  }
  // No text column can hold a NUL or a lone surrogate on PostgreSQL: refused here, alike on
  // both databases, rather than failing at the write.
  const flaw = jsonFlaw(value);
  if (flaw) return { ok: false, answer: apiError(400, flaw, JSON_FLAW_MESSAGES[flaw]) };
  return { ok: true, value };
}

