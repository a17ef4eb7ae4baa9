// How the pages log a request they refused: through the app's logger (which scrubs secrets,
// and whose lines the tests check), as information, since the client chose it, with the path
// the log may keep.
import type { Logger } from "./logger.server";
import { GATEWAY_WEBHOOKS_PATH, routedPath } from "./routed-path";

/**
 * A path as the log keeps it: the token of a shop's gateway notification URL (under
 * /gateway/webhooks/, in any spelling the router reads as such) authenticates notifications,
 * so a request that reaches the pages with one (a suffix added, a doubled slash) logs none.
 */
export function loggedPath(pathname: string): string {
  return routedPath(pathname)?.startsWith(GATEWAY_WEBHOOKS_PATH) ? `${GATEWAY_WEBHOOKS_PATH}[token]` : pathname;
}

/** The request, as a log line names it. */
export function pageRequestFields(request: Request): { method: string; path: string } {
  return { method: request.method, path: loggedPath(new URL(request.url).pathname) };
}

/** A request the pages answered with a 4xx of their own: the client's doing, not an error, so no one can fill the error log from outside. */
export function logPageRequestRefused(logger: Logger, request: Request, status: number): void {
  logger.info("Page request refused", { ...pageRequestFields(request), status });
}
