// Where a request goes, read as the router reads it: the page-kind headers (server/page-headers.ts)
// and App Bridge's headers (app/entry.server.tsx) are chosen from it, so that no other spelling
// of a path escapes them.

/**
 * The path as the router reads it, so that no other spelling of a page escapes its headers:
 * the URL parser's (a backslash as "/", dot segments resolved), each segment percent-decoded, in lower
 * case (routes match in any case), repeated slashes as one. Null when it cannot be decoded.
 */
export function routedPath(url: string): string | null {
  try {
    // Prefixed as Remix does, so "//pay/…" stays a path and is not read as a host.
    const { pathname } = new URL(`http://localhost${url}`);
    const decoded = pathname.split("/").map((segment) => decodeURIComponent(segment).replace(/\//g, "%2F")).join("/");
    return decoded.toLowerCase().replace(/\/{2,}/g, "/");
  } catch {
    return null;
  }
}

/** The admin's pages, their single-fetch data ("/app.data", "/app/payments.data") included. */
export const isAdminPath = (path: string) => path === "/app" || path.startsWith("/app/") || path.startsWith("/app.");

/** Where the gateway's notifications come in: a shop's notification URL is this path and its token. */
export const GATEWAY_WEBHOOKS_PATH = "/gateway/webhooks/";
