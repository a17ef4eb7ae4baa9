// Headers every page of a kind gets, whatever its route sets: the shopper's pages (a signed
// link, an address to pay, the return links' waiting page) are never cached, never framed by
// another site and never sent on in a Referer to another site; the admin's pages and their
// data (customers' names and e-mails) are never cached. A route's own value of a header is kept.
//
// "same-origin", not "no-referrer": under no-referrer a browser posts the page's own form (a
// coin picked without JavaScript, or before the scripts arrived) with `Origin: null`, which
// Remix takes for a cross-site post and refuses. Same-origin requests carry the page's origin
// (and address, to this server only); no other site gets either.
import type { RequestHandler } from "express";
import { isAdminPath, routedPath } from "../app/lib/routed-path";

const SHOPPER_PAGE_HEADERS: Record<string, string> = {
  "Cache-Control": "no-store",
  "Referrer-Policy": "same-origin",
  "Content-Security-Policy": "frame-ancestors 'none'",
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
};

const ADMIN_PAGE_HEADERS: Record<string, string> = {
  "Cache-Control": "private, no-store",
  "X-Content-Type-Options": "nosniff",
};

/**
 * A path that cannot be decoded gets both kinds' headers: it is never cached, framed or sent on.
 * The server refuses such a path before any page (server/request-errors.ts); this keeps the
 * middleware safe on its own.
 */
const UNDECODABLE_PATH_HEADERS: Record<string, string> = { ...SHOPPER_PAGE_HEADERS, ...ADMIN_PAGE_HEADERS };

const isShopperPath = (path: string) => path.startsWith("/pay/") || path.startsWith("/payments/return/");

function headersFor(url: string): Record<string, string> | null {
  const path = routedPath(url);
  if (path === null) return UNDECODABLE_PATH_HEADERS;
  return isShopperPath(path) ? SHOPPER_PAGE_HEADERS : isAdminPath(path) ? ADMIN_PAGE_HEADERS : null;
}

export function pageHeaders(): RequestHandler {
  return (req, res, next) => {
    // The full address, as Remix reads it (req.path is relative to a mount point).
    const headers = headersFor(req.originalUrl);
    if (headers) {
      // Added as the head is written, each only if the route did not set it: Remix appends a
      // route's headers, so setting them first would give "no-store, no-store" or worse.
      const writeHead = res.writeHead;
      res.writeHead = function (this: typeof res, ...args: Parameters<typeof writeHead>) {
        for (const [name, value] of Object.entries(headers)) if (!res.hasHeader(name)) res.setHeader(name, value);
        return writeHead.apply(this, args);
      } as typeof writeHead;
    }
    next();
  };
}
