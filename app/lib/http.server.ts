// Small helpers the thin routes share: JSON answers, bounded body reading, and zod
// failures turned into clear 4xx answers.
import type { ZodError } from "zod";

export const MAX_JSON_BODY_BYTES = 64 * 1024;

/**
 * A JSON answer with its length: the server's compression then leaves the short answers of
 * the machine-facing routes as they are (under its 1 KB threshold a gzip stream costs more
 * than it saves) instead of compressing every answer whose length it cannot see.
 */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  const text = body === null ? null : JSON.stringify(body);
  return new Response(text, {
    status,
    headers: {
      "content-type": "application/json; charset=utf-8",
      "cache-control": "no-store",
      ...(text === null ? {} : { "content-length": String(Buffer.byteLength(text)) }),
      ...headers,
    },
  });
}

export function errorResponse(status: number, error: string, message: string, extra: Record<string, unknown> = {}): Response {
  return jsonResponse(status, { error, message, ...extra });
}

export function zodProblem(error: ZodError): { message: string; fields: Record<string, string> } {
  const fields: Record<string, string> = {};
  for (const issue of error.issues.slice(0, 20)) fields[issue.path.join(".") || "(body)"] = issue.message;
  return { message: "The request does not have the expected shape.", fields };
}

export type BodyRead = { ok: true; bytes: Uint8Array } | { ok: false; response: Response };

/** Past the limit the rest of a body is read and dropped up to this size, so the connection stays usable. */
const DRAIN_LIMIT_BYTES = 8 * 1024 * 1024;

async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, already: number): Promise<void> {
  let size = already;
  while (size <= DRAIN_LIMIT_BYTES) {
    const { done, value } = await reader.read();
    if (done) return;
    size += value.byteLength;
  }
  await reader.cancel().catch(() => undefined);
}

/** Reads at most `maxBytes` of the body; a larger one is refused (413) and not kept. */
export async function readBody(request: Request, maxBytes = MAX_JSON_BODY_BYTES): Promise<BodyRead> {
  const tooLarge = (): BodyRead => ({ ok: false, response: errorResponse(413, "body_too_large", `The body must be at most ${maxBytes} bytes.`) });
  if (!request.body) return { ok: true, bytes: new Uint8Array(0) };
  const reader = request.body.getReader();
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) {
    await drain(reader, 0);
    return tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await drain(reader, size);
      return tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, bytes };
}

export type JsonRead = { ok: true; value: unknown } | { ok: false; response: Response };

/** A JSON body: content type checked, size bounded, parse errors answered with 400/415. */
export async function readJsonBody(request: Request, maxBytes = MAX_JSON_BODY_BYTES): Promise<JsonRead> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) {
    return { ok: false, response: errorResponse(415, "unsupported_media_type", "Send the body as application/json.") };
  }
  const body = await readBody(request, maxBytes);
  if (!body.ok) return body;
  try {
    return { ok: true, value: JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body.bytes)) };
  } catch {
    return { ok: false, response: errorResponse(400, "malformed_json", "The body is not valid UTF-8 JSON.") };
  }
}

export function methodNotAllowed(allowed: string): Response {
  return errorResponse(405, "method_not_allowed", `Use ${allowed}.`, {});
}
