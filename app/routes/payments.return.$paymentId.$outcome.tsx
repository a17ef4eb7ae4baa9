// Where the gateway sends the shopper back (url_ok, url_ko, url_standby). While Shopify
// cannot be told yet, a page in the payment page's language checks again by itself; after a
// couple of minutes of it (the gateway or Shopify out of reach) it says so, tells a shopper who
// paid not to pay again, and checks less often. Once Shopify refused a paid payment's outcome,
// the page says the payment was received. A page that checks by itself says so and how often,
// and lets the shopper check at once, or stop the automatic checks. A return that fails
// unexpectedly gets the same page, answered 503, rather than an error page.
import type { LoaderFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { z } from "zod";
import { pageChecks } from "~/payment-page/checking";
import { acceptedLanguage, languageTag, pageLanguage, type PageLanguage } from "~/payment-page/language";
import { pageTexts, type PageTexts } from "~/payment-page/texts";
import { pageRequestFields } from "~/lib/page-requests.server";
import { handleShopperReturn } from "~/payments/handle-return";

const paramsSchema = z.object({
  paymentId: z.string().regex(/^[a-z0-9]{10,40}$/),
  outcome: z.enum(["ok", "ko", "standby"]),
  sig: z.string().regex(/^[A-Za-z0-9_-]{20,100}$/),
});

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** After this long on the waiting page, the shopper is told it takes longer than usual. */
const LONG_WAIT_SECONDS = 120;
/** How often the page checks again once the wait is long: a shopper may keep it open for hours. */
const LONG_WAIT_REFRESH_SECONDS = 15;
/** The query parameter the waiting page carries through its reloads: when the wait began (Unix seconds). */
const WAITING_SINCE = "waiting";

/**
 * When this shopper's wait began: the time the page carried through its reloads, or now. Only
 * the text shown depends on it, so it needs no signature; a time ahead of now or over a day
 * old (altered, or a bookmarked link) starts the wait again.
 */
function waitingSince(url: URL, nowSeconds: number): number {
  const text = url.searchParams.get(WAITING_SINCE) ?? "";
  const given = /^\d{1,12}$/.test(text) ? Number(text) : NaN;
  return given <= nowSeconds && nowSeconds - given <= 86_400 ? given : nowSeconds;
}

/** A page that checks again: every how many seconds, and its own link (the return link, its signature and what its reloads carry). */
interface Checking {
  seconds: number;
  url: URL;
}

/**
 * The page checks again by reloading itself (a meta refresh), as it has no scripts: the
 * reload is what takes the shopper on once Shopify answers, and until then it brings back
 * the same short page, with nothing typed or chosen to lose. A refresh the shopper cannot
 * control would still be a time limit (WCAG 2.2.1; F41: the reload moves focus back to the
 * top and restarts a screen reader), so it stays only under the shopper's control: the page
 * says in words that it checks again by itself and how often, "Check now" checks at once, and
 * "Stop automatic checks" serves the same page without the refresh (2.2.1's "turn off"),
 * from which the shopper checks when they want, or starts the automatic checks again.
 */
function checkingHtml(texts: PageTexts["checking"], checking: Checking): { refreshSeconds: number | null; head: string; notice: string; action: string } {
  const checks = pageChecks(checking.url, checking.seconds, texts);
  const now = escapeHtml(checks.here);
  return {
    refreshSeconds: checks.refreshSeconds,
    head: checks.refreshSeconds === null ? "" : `\n<meta http-equiv="refresh" content="${checks.refreshSeconds};url=${now}">`,
    // The words about the checks and the link that stops them come right after the heading,
    // before anything else: one Tab, or a screen reader reading from the top, reaches them
    // before the next reload starts the page again. "Check now" follows the page's own words.
    notice: `<p>${escapeHtml(checks.said)}<br><a href="${escapeHtml(checks.toggle)}">${escapeHtml(checks.toggleLabel)}</a></p>`,
    action: `<p><a class="button" href="${now}">${escapeHtml(checks.checkNow)}</a></p>`,
  };
}

/** The pages' stylesheet: the payment page's ink, links and large touch targets, and a visible focus. */
const STYLE = [
  "body{font-family:system-ui,sans-serif;display:grid;place-items:center;min-height:90vh;margin:0;color:#202223}",
  "main{max-width:28rem;padding:1.5rem;text-align:center}",
  "a{color:#1f5199;display:inline-block;box-sizing:border-box;min-height:44px;padding:10px 0}",
  "a.button{background:#1f2124;color:#fff;border-radius:10px;padding:11px 16px;text-decoration:none;font-weight:600}",
  "a:focus-visible{outline:3px solid #1f5199;outline-offset:2px}",
].join("");

/** A page of its own (no scripts): a heading and a paragraph in the shopper's language, and how it checks again when it does. */
function shopperPage(language: PageLanguage, texts: { title: string; heading: string; body: string }, answer: { status: number; checking?: Checking }): Response {
  const checking = answer.checking ? checkingHtml(pageTexts(language).checking, answer.checking) : { refreshSeconds: null, head: "", notice: "", action: "" };
  const html = `<!doctype html><html lang="${languageTag(language)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">${checking.head}
<title>${escapeHtml(texts.title)}</title>
<style>${STYLE}</style></head>
<body><main><h1>${escapeHtml(texts.heading)}</h1>${checking.notice}<p>${escapeHtml(texts.body)}</p>${checking.action}</main></body></html>`;
  const headers: Record<string, string> = { "content-type": "text/html; charset=utf-8" };
  if (checking.refreshSeconds !== null) headers["retry-after"] = String(checking.refreshSeconds);
  return new Response(html, { status: answer.status, headers });
}

function shopNotifiedPage(request: Request, retryAfterSeconds: number, locale: string | null): Response {
  const language = pageLanguage(locale);
  return shopperPage(language, pageTexts(language).shopNotified, { status: 200, checking: { seconds: retryAfterSeconds, url: new URL(request.url) } });
}

/** The page that checks again, its reloads carrying when the wait began (the return link and its signature kept). */
function waitingPage(request: Request, retryAfterSeconds: number, language: PageLanguage, status = 200): Response {
  const url = new URL(request.url);
  const now = Math.floor(Date.now() / 1000);
  const since = waitingSince(url, now);
  url.searchParams.set(WAITING_SINCE, String(since));
  const long = now - since >= LONG_WAIT_SECONDS;
  return shopperPage(language, pageTexts(language)[long || status !== 200 ? "waitingLong" : "waitingForShop"], {
    status,
    checking: { seconds: long ? Math.max(retryAfterSeconds, LONG_WAIT_REFRESH_SECONDS) : retryAfterSeconds, url },
  });
}

/** A link that leads to no payment: said so, and what to do, in the language the browser asks for. */
function notValidPage(request: Request): Response {
  const language = acceptedLanguage(request.headers.get("accept-language"));
  return shopperPage(language, pageTexts(language).linkNotValid, { status: 404 });
}

/** How soon the page checks again after the return failed unexpectedly (its database, say). */
const AFTER_FAILURE_RETRY_SECONDS = 10;

export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const parsed = paramsSchema.safeParse({ ...params, sig: new URL(request.url).searchParams.get("sig") ?? "" });
  if (!parsed.success) return notValidPage(request);
  let result: Awaited<ReturnType<typeof handleShopperReturn>>;
  try {
    result = await handleShopperReturn(context.services, { paymentId: parsed.data.paymentId, signature: parsed.data.sig, outcome: parsed.data.outcome });
  } catch (error) {
    // A shopper who may have just paid is not left on an error page: the page checks again by
    // itself and says not to pay again, in the language the browser asks for (the payment, and
    // so its shopper's locale, may be what could not be read).
    context.services.logger.error("Page request failed", { ...pageRequestFields(request), error });
    return waitingPage(request, AFTER_FAILURE_RETRY_SECONDS, acceptedLanguage(request.headers.get("accept-language")), 503);
  }
  switch (result.kind) {
    case "redirect":
      return redirect(result.url, 303);
    case "wait":
      return waitingPage(request, result.retryAfterSeconds, pageLanguage(result.locale));
    case "shop_notified":
      return shopNotifiedPage(request, result.retryAfterSeconds, result.locale);
    case "shop_gone": {
      const language = pageLanguage(result.locale);
      return shopperPage(language, pageTexts(language).shopGone, { status: 410 });
    }
    case "not_found":
      return notValidPage(request);
  }
}
