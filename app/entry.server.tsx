import { PassThrough } from "node:stream";
import { renderToPipeableStream } from "react-dom/server";
import { isRouteErrorResponse, RemixServer } from "@remix-run/react";
import { createReadableStreamFromReadable, type AppLoadContext, type EntryContext, type HandleErrorFunction } from "@remix-run/node";
import { isbot } from "isbot";
import { logPageRequestRefused, pageRequestFields } from "./lib/page-requests.server";
import { isAdminPath, routedPath } from "./lib/routed-path";
import { addDocumentResponseHeaders } from "./shopify.server";

export const streamTimeout = 5000;

/**
 * An error a loader, an action or the rendering threw (a thrown Response is an answer, not an
 * error): logged through the app's logger, which scrubs secrets and which the tests check,
 * instead of Remix's own console.error. A request its client abandoned is not logged. One the
 * client got wrong (Remix's own 4xx: a post to a page with no action) is logged as information,
 * so that no one can fill the error log, or set off its alerts, from outside.
 */
export const handleError: HandleErrorFunction = (error, { request, context }) => {
  if (request.signal.aborted) return;
  if (isRouteErrorResponse(error) && error.status < 500) {
    logPageRequestRefused(context.services.logger, request, error.status);
    return;
  }
  context.services.logger.error("Page request failed", { ...pageRequestFields(request), error });
};

export default async function handleRequest(
  request: Request,
  responseStatusCode: number,
  responseHeaders: Headers,
  remixContext: EntryContext,
  loadContext: AppLoadContext,
) {
  // App Bridge headers belong to the embedded admin only (the index, /app and what lies below
  // it, a stale link's 404 included, and the log-in pages), not to the shopper's pages. Told by
  // the path as the router reads it: it matches /APP/… or /%61pp/… as /app/… too.
  const path = routedPath(new URL(request.url).pathname);
  if (path !== null && (path === "/" || isAdminPath(path) || path.startsWith("/auth"))) {
    addDocumentResponseHeaders(request, responseHeaders);
    // The development login's admin runs without App Bridge (app/routes/app.tsx), and offline:
    // the library's preload of App Bridge from Shopify's CDN would only fail in the browser.
    if (loadContext.services.env.DEV_ADMIN_LOGIN) responseHeaders.delete("Link");
  }
  const userAgent = request.headers.get("user-agent");
  const callbackName = isbot(userAgent ?? "") ? "onAllReady" : "onShellReady";

  return new Promise((resolve, reject) => {
    const { pipe, abort } = renderToPipeableStream(<RemixServer context={remixContext} url={request.url} />, {
      [callbackName]: () => {
        const body = new PassThrough();
        const stream = createReadableStreamFromReadable(body);
        responseHeaders.set("Content-Type", "text/html");
        resolve(new Response(stream, { headers: responseHeaders, status: responseStatusCode }));
        pipe(body);
      },
      onShellError(error) {
        reject(error);
      },
      onError() {
        responseStatusCode = 500;
      },
    });
    setTimeout(abort, streamTimeout + 1000);
  });
}
