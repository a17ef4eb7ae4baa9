// How a page without scripts checks again by itself (a meta refresh) under the shopper's
// control (WCAG 2.2.1): the return link's pages, and the payment page when its scripts do not
// run. The page says how often it checks, "Check now" checks at once, and "Stop automatic
// checks" serves the same page without the refresh, from which the shopper can start them again.

/**
 * The query parameter of a page whose automatic checks the shopper stopped ("1"): it checks
 * only when asked. It needs no signature: it decides only whether the page reloads itself.
 */
export const PAUSED_PARAM = "paused";

/** The links of a page that checks again: itself (to reload or check now), and itself with its checks stopped or started again. */
export interface CheckingLinks {
  paused: boolean;
  /** The page's own path and query, as it was opened. */
  here: string;
  /** The same page with its automatic checks stopped, or started again when they were. */
  toggle: string;
}

export function checkingLinks(url: URL): CheckingLinks {
  const paused = url.searchParams.get(PAUSED_PARAM) === "1";
  const toggled = new URL(url);
  if (paused) toggled.searchParams.delete(PAUSED_PARAM);
  else toggled.searchParams.set(PAUSED_PARAM, "1");
  return { paused, here: `${url.pathname}${url.search}`, toggle: `${toggled.pathname}${toggled.search}` };
}
