// The pages' request handler: Remix's, as @remix-run/express builds it (its request is built the
// same way here, as the package exports only the whole handler), but for how a response's body is
// written. Remix's Express adapter reads a streamed body as fast as it can and writes
// every chunk without waiting for the client to take it, and goes on reading after the client
// has gone: a payments export (read from the database batch by batch as it is sent) to a slow
// link, or to a tab closed half-way, read every batch at once and held the whole file in the
// process's memory. Here the next chunk is read only once the connection has taken the last one,
// and the body is cancelled (its reads end) as soon as the client goes.
import type { Writable } from "node:stream";
import { createReadableStreamFromReadable, createRequestHandler as createRemixHandler, type AppLoadContext, type ServerBuild } from "@remix-run/node";
import type express from "express";

export function remixHandler(options: {
  build: ServerBuild | (() => Promise<ServerBuild>);
  mode: string | undefined;
  getLoadContext: () => AppLoadContext;
}): express.RequestHandler {
  const handle = createRemixHandler(options.build, options.mode);
  return async (req, res, next) => {
    try {
      const response = await handle(remixRequest(req, res), options.getLoadContext());
      await sendResponse(res, response);
    } catch (error) {
      next(error);
    }
  };
}

/**
 * The Fetch request Remix is given for `req`: its address as the client asked for it (the host's
 * port kept, X-Forwarded-Host's first; the protocol and host as Express reads them, through a
 * trusted proxy's headers when it trusts one), its headers, its body streamed, and a signal
 * that aborts the loaders and actions once the client goes before the answer is sent.
 */
function remixRequest(req: express.Request, res: express.Response): Request {
  const portOf = (host: string | undefined) => Number.parseInt(host?.split(":")[1] ?? "", 10);
  const port = [portOf(req.get("X-Forwarded-Host")), portOf(req.get("host"))].find((p) => Number.isSafeInteger(p));
  const url = new URL(`${req.protocol}://${req.hostname}${port === undefined ? "" : `:${port}`}${req.originalUrl}`);
  const headers = new Headers();
  for (const [key, values] of Object.entries(req.headers)) {
    if (values === undefined) continue;
    for (const value of Array.isArray(values) ? values : [values]) headers.append(key, value);
  }
  let controller: AbortController | null = new AbortController();
  const init: RequestInit & { duplex?: "half" } = { method: req.method, headers, signal: controller.signal };
  if (req.method !== "GET" && req.method !== "HEAD") {
    init.body = createReadableStreamFromReadable(req);
    init.duplex = "half";
  }
  res.on("finish", () => (controller = null));
  res.on("close", () => controller?.abort());
  return new Request(url.href, init);
}

/** Sends `response` as @remix-run/express does (status, headers, an event stream's headers at once), its body at the client's pace. */
export async function sendResponse(res: express.Response, response: Response): Promise<void> {
  res.statusMessage = response.statusText;
  res.status(response.status);
  for (const [key, value] of response.headers.entries()) res.append(key, value);
  if (/text\/event-stream/i.test(response.headers.get("Content-Type") ?? "")) res.flushHeaders();
  if (response.body) await writeBody(response.body, res);
  else res.end();
}

/** A response as the compression middleware leaves it: `flush` sends what it holds so far. */
type Flushable = Writable & { flush?: () => void };

/**
 * Writes `body` to `out`, reading each chunk only once `out` has taken the one before (its
 * buffer drained), and flushing each (a streamed page's parts go out as they are ready, through
 * compression too). When `out` closes first (the client went), `body` is cancelled and nothing
 * more is read from it.
 */
export async function writeBody(body: ReadableStream<Uint8Array>, out: Flushable): Promise<void> {
  const reader = body.getReader();
  let gone = false;
  let wake: (() => void) | null = null;
  const onClose = () => {
    gone = true;
    wake?.();
  };
  const onDrain = () => wake?.();
  out.once("close", onClose);
  out.on("drain", onDrain);
  try {
    for (;;) {
      const { done, value } = gone || out.destroyed ? { done: false, value: undefined } : await reader.read();
      if (gone || out.destroyed) {
        await reader.cancel().catch(() => undefined);
        return;
      }
      if (done) {
        out.end();
        return;
      }
      const more = out.write(value);
      out.flush?.();
      if (!more) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          // Closed while writing (a reset connection says so at once).
          if (gone || out.destroyed) resolve();
        });
        wake = null;
      }
    }
  } catch (error) {
    await reader.cancel(error).catch(() => undefined);
    out.destroy(error instanceof Error ? error : new Error(String(error)));
    throw error;
  } finally {
    out.off("close", onClose);
    out.off("drain", onDrain);
  }
}
