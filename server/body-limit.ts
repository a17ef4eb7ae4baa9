// Bounds the bodies of the Remix routes (the merchant's login and admin forms, the shopper's
// coin choice, Shopify's webhooks), which read a body whole: one declared larger than the
// limit is answered 413 before any of it is read, and one sent without a length (chunked) is
// answered 411, so no body is ever read past its declared length. Browsers and Shopify send
// every such body with its Content-Length. A body a page answers without reading is dropped
// once the answer is out, so the connection serves the next request. The machine-facing API
// (api-router.ts) bounds its own.
import type { IncomingMessage } from "node:http";
import type express from "express";
import { apiError, DRAIN_LIMIT_BYTES, encodeAnswer } from "../app/api/http.server";

/**
 * After a refusal, or an answer that left the body unread, the rest of the body is read and
 * dropped up to DRAIN_LIMIT_BYTES, so a client still sending reads the answer (a connection
 * closed on unread bytes is reset, and the answer with it); past it the connection is closed.
 */
function dropRest(req: IncomingMessage): void {
  let dropped = 0;
  // Whoever was reading it is done: Remix's stream of the body, which nobody reads once the
  // page has answered, would pause it again at its first chunk.
  req.removeAllListeners("data");
  req.on("data", (chunk: Buffer) => {
    dropped += chunk.byteLength;
    if (dropped > DRAIN_LIMIT_BYTES) req.socket.destroy();
  });
  req.resume();
}

function refuse(req: IncomingMessage, res: express.Response, status: number, error: string, message: string): void {
  const { headers, text } = encodeAnswer(apiError(status, error, message));
  res.writeHead(status, { ...headers, connection: "close" });
  res.end(text);
  dropRest(req);
}

export function boundedBodies(maxBytes: number): express.RequestHandler {
  return (req, res, next) => {
    const declared = req.headers["content-length"];
    if (declared === undefined && req.headers["transfer-encoding"] !== undefined) {
      return refuse(req, res, 411, "length_required", "Send the body with its Content-Length.");
    }
    if (Number(declared) > maxBytes) return refuse(req, res, 413, "body_too_large", `The body must be at most ${maxBytes} bytes.`);
    // The old way of asking a route for its data: the app asks with ".data" paths, and Remix
    // answers "?_data=" with an action's status lost (200 for a refused form) and a warning.
    if (new URL(req.originalUrl, "http://localhost").searchParams.has("_data")) {
      return refuse(req, res, 400, "unsupported_data_request", "Ask for a page's data with its .data path, not ?_data=.");
    }
    // A page may answer without reading the body it was sent (a form posted to a page without
    // an action, a link that leads nowhere). The rest is read and dropped once the answer is
    // out: left unread, it would hold the connection, and the next request a client (a load
    // balancer) sends on it would never be answered.
    res.once("finish", () => {
      if (!req.readableEnded && !req.destroyed) dropRest(req);
    });
    next();
  };
}
