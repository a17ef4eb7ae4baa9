// HTTP plumbing shared by the sandbox's routes: bounded body reading, request
// body decoding (JSON, multipart/form-data, urlencoded, as DRF's default
// parsers accept), and responses written as the real service writes them.
import type { IncomingMessage, ServerResponse } from "node:http";
import { parseMultipart } from "./multipart.js";
import { pythonJsonDumps, type PyJson } from "./python-json.js";

export const MAX_BODY_BYTES = 1_000_000;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: PyJson,
  ) {
    super(`HTTP ${status}`);
  }
}

export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) throw new HttpError(413, { detail: "Request body too large." });
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

function pythonTypeName(v: unknown): string {
  if (v === null) return "NoneType";
  if (Array.isArray(v)) return "list";
  if (typeof v === "string") return "str";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float";
  return "dict";
}

function mediaType(req: IncomingMessage): { type: string | null; boundary: string } {
  const header = req.headers["content-type"];
  if (!header) return { type: null, boundary: "" };
  const [type = "", ...params] = header.split(";");
  let boundary = "";
  for (const p of params) {
    const [k = "", ...v] = p.trim().split("=");
    if (k.toLowerCase() === "boundary") boundary = v.join("=").replace(/^"|"$/g, "");
  }
  return { type: type.trim().toLowerCase(), boundary };
}

/**
 * Decodes a request body as DRF's default parsers do: the JSON value (of any type) for a JSON
 * content type, the fields of a multipart or urlencoded form, and {} for an empty body or one
 * without a Content-Type. Answers 413 for a body over MAX_BODY_BYTES, 400 for unreadable JSON or
 * multipart and 415 for any other content type, each with {"detail": ...}.
 */
export async function readBodyData(req: IncomingMessage): Promise<unknown> {
  const raw = await readBody(req);
  const { type, boundary } = mediaType(req);
  if (raw.length === 0 || type === null) return {};
  if (type === "application/json" || type.endsWith("+json")) {
    try {
      return JSON.parse(raw.toString("utf8")) as unknown;
    } catch (err) {
      throw new HttpError(400, { detail: `JSON parse error - ${(err as Error).message}` });
    }
  }
  if (type === "multipart/form-data") {
    const parsed = parseMultipart(raw, boundary);
    if (!parsed.ok) throw new HttpError(400, { detail: parsed.reason });
    return parsed.fields;
  }
  if (type === "application/x-www-form-urlencoded") {
    return Object.fromEntries(new URLSearchParams(raw.toString("utf8")));
  }
  throw new HttpError(415, { detail: `Unsupported media type "${type}" in request.` });
}

export function isFieldMap(data: unknown): data is Record<string, unknown> {
  return typeof data === "object" && data !== null && !Array.isArray(data);
}

/**
 * Decodes a request body into a field map as a DRF serializer receives it (readBodyData), and
 * answers a body that is not an object as DRF does: 400 {"non_field_errors": [...]}.
 */
export async function readFields(req: IncomingMessage): Promise<Record<string, unknown>> {
  const data = await readBodyData(req);
  if (!isFieldMap(data)) {
    throw new HttpError(400, { non_field_errors: [`Invalid data. Expected a dictionary, but got ${pythonTypeName(data)}.`] });
  }
  return data;
}

export function sendJson(res: ServerResponse, status: number, body: PyJson, headers: Record<string, string> = {}): void {
  const text = pythonJsonDumps(body, { compact: true });
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
    Vary: "Accept",
    ...headers,
  });
  res.end(text);
}

export function sendPlainJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), "Cache-Control": "no-store" });
  res.end(text);
}

export function sendHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Length": Buffer.byteLength(html),
    "Cache-Control": "no-store",
  });
  res.end(html);
}

export function redirect(res: ServerResponse, status: 301 | 302 | 303, location: string): void {
  res.writeHead(status, { Location: location, "Content-Length": 0 });
  res.end();
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);
}

/** decodeURIComponent that answers a malformed escape with the raw text instead of throwing. */
export function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
