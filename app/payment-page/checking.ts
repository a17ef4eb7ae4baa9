// How a page without scripts checks again by itself (a meta refresh) under the shopper's
// control (WCAG 2.2.1): the return link's pages, and the payment page when its scripts do not
// run. The page says how often it checks, "Check now" checks at once, and "Stop automatic
// checks" serves the same page without the refresh, from which the shopper can start them again.
import { fill, type PageTexts } from "./texts";

/**
 * The query parameter of a page whose automatic checks the shopper stopped ("1"): it checks
 * only when asked. It needs no signature: it decides only whether the page reloads itself.
 */
export const PAUSED_PARAM = "paused";

/** What a page that checks again shows and links to, however it is written out. */
export interface PageChecks {
  /** Every how many seconds the page reloads itself; null once the shopper stopped the checks. */
  refreshSeconds: number | null;
  /** The page's own path and query, as it was opened: what it reloads, and "Check now". */
  here: string;
  /** The same page with its automatic checks stopped, or started again when they were. */
  toggle: string;
  /** The words about the checks ("checks again every 15 seconds", or that they are stopped). */
  said: string;
  /** The toggle link's words: stop the checks, or resume them. */
  toggleLabel: string;
  checkNow: string;
}

/** The checks of the page opened at `url`, which reloads itself every `seconds` unless stopped. */
export function pageChecks(url: URL, seconds: number, texts: PageTexts["checking"]): PageChecks {
  const paused = url.searchParams.get(PAUSED_PARAM) === "1";
  const toggled = new URL(url);
  if (paused) toggled.searchParams.delete(PAUSED_PARAM);
  else toggled.searchParams.set(PAUSED_PARAM, "1");
  return {
    refreshSeconds: paused ? null : seconds,
    here: `${url.pathname}${url.search}`,
    toggle: `${toggled.pathname}${toggled.search}`,
    said: paused ? texts.paused : fill(texts.every, { seconds: String(seconds) }),
    toggleLabel: paused ? texts.resume : texts.stop,
    checkNow: texts.checkNow,
  };
}
