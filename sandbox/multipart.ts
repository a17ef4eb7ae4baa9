// A small multipart/form-data reader for the legacy POST /orders/ encoding:
// text fields are returned by name (the last one wins, as Django's QueryDict
// does); file parts (e.g. front_dni) are skipped.
export type MultipartResult = { ok: true; fields: Record<string, string> } | { ok: false; reason: string };

function parseDisposition(value: string): { name?: string; filename?: string } {
  const out: { name?: string; filename?: string } = {};
  const re = /;\s*(name|filename)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]*))/gi;
  for (let m = re.exec(value); m !== null; m = re.exec(value)) {
    const key = (m[1] ?? "").toLowerCase();
    const raw = m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : (m[3] ?? "");
    if (key === "name") out.name = raw;
    else out.filename = raw;
  }
  return out;
}

export function parseMultipart(body: Buffer, boundary: string): MultipartResult {
  if (!boundary || boundary.length > 200) return { ok: false, reason: "Invalid boundary in multipart: None" };
  const delimiter = Buffer.from(`--${boundary}`);
  const fields: Record<string, string> = {};
  let pos = body.indexOf(delimiter);
  if (pos < 0) return { ok: false, reason: "Multipart form parse error - no boundary found in the body." };
  for (;;) {
    pos += delimiter.length;
    if (body.subarray(pos, pos + 2).toString() === "--") break;
    if (body.subarray(pos, pos + 2).toString() === "\r\n") pos += 2;
    const next = body.indexOf(delimiter, pos);
    if (next < 0) return { ok: false, reason: "Multipart form parse error - the closing boundary is missing." };
    let part = body.subarray(pos, next);
    if (part.subarray(part.length - 2).toString() === "\r\n") part = part.subarray(0, part.length - 2);
    const headerEnd = part.indexOf("\r\n\r\n");
    if (headerEnd < 0) return { ok: false, reason: "Multipart form parse error - a part has no header block." };
    const headers = part.subarray(0, headerEnd).toString("utf8").split("\r\n");
    const content = part.subarray(headerEnd + 4);
    const disposition = headers.find((h) => h.toLowerCase().startsWith("content-disposition:"));
    if (disposition) {
      const { name, filename } = parseDisposition(disposition);
      if (name !== undefined && filename === undefined) fields[name] = content.toString("utf8");
    }
    pos = next;
  }
  return { ok: true, fields };
}
