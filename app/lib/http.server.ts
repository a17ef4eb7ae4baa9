// JSON answers, for the Remix routes (a web Response) and the machine-facing API
// (app/api/), with the same headers; and the size bound of the Remix routes' bodies.

/**
 * The largest body a Remix route takes: the merchant's login and admin forms, the shopper's
 * coin choice and Shopify's webhooks. The largest legitimate one, a customers/data_request
 * naming up to 10,000 orders, is a few hundred KB. The server refuses a larger body (413) by
 * its Content-Length, before reading it (server/body-limit.ts).
 */
export const MAX_ROUTE_BODY_BYTES = 1024 * 1024;

/**
 * The headers of a JSON answer: its length, so the server's compression leaves short answers
 * as they are (under its 1 KB threshold a gzip stream costs more than it saves) instead of
 * compressing every answer whose length it cannot see; and never cached.
 */
export function jsonHeaders(text: string | null): Record<string, string> {
  return {
    ...(text === null ? {} : { "content-type": "application/json; charset=utf-8", "content-length": String(Buffer.byteLength(text)) }),
    "cache-control": "no-store",
  };
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  const text = body === null ? null : JSON.stringify(body);
  return new Response(text, { status, headers: { ...jsonHeaders(text), ...headers } });
}
