// Where the gateway sends the shopper back (url_ok, url_ko, url_standby). While Shopify
// cannot be told yet, a page in the payment page's language checks again by itself; after a
// couple of minutes of it (the gateway or Shopify out of reach) it says so, tells a shopper who
// paid not to pay again, and checks less often. Once Shopify refused a paid payment's outcome,
// the page says the payment was received.
import type { LoaderFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { z } from "zod";
import { acceptedLanguage, pageLanguage, type PageLanguage } from "~/payment-page/language";
import { pageTexts } from "~/payment-page/texts";
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

/** A page of its own (no scripts): a heading and a paragraph in the shopper's language. */
function shopperPage(
  language: PageLanguage,
  texts: { title: string; heading: string; body: string },
  answer: { status: number; refreshSeconds?: number; refreshUrl?: string },
): Response {
  const target = answer.refreshUrl === undefined ? "" : `;url=${answer.refreshUrl}`;
  const refresh = answer.refreshSeconds === undefined ? "" : `\n<meta http-equiv="refresh" content="${answer.refreshSeconds}${escapeHtml(target)}">`;
  const html = `<!doctype html><html lang="${language}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">${refresh}
<title>${escapeHtml(texts.title)}</title>
<style>body{font-family:system-ui,sans-serif;display:grid;place-items:center;min-height:90vh;margin:0;color:#202223}main{max-width:28rem;padding:1.5rem;text-align:center}</style></head>
<body><main><h1>${escapeHtml(texts.heading)}</h1><p>${escapeHtml(texts.body)}</p></main></body></html>`;
  const headers: Record<string, string> = { "content-type": "text/html; charset=utf-8" };
  if (answer.refreshSeconds !== undefined) headers["retry-after"] = String(answer.refreshSeconds);
  return new Response(html, { status: answer.status, headers });
}

function shopNotifiedPage(retryAfterSeconds: number, locale: string | null): Response {
  const language = pageLanguage(locale);
  return shopperPage(language, pageTexts(language).shopNotified, { status: 200, refreshSeconds: retryAfterSeconds });
}

/** The page that checks again, its reloads carrying when the wait began (the return link and its signature kept). */
function waitingPage(request: Request, retryAfterSeconds: number, locale: string | null): Response {
  const language = pageLanguage(locale);
  const url = new URL(request.url);
  const now = Math.floor(Date.now() / 1000);
  const since = waitingSince(url, now);
  url.searchParams.set(WAITING_SINCE, String(since));
  const long = now - since >= LONG_WAIT_SECONDS;
  return shopperPage(language, pageTexts(language)[long ? "waitingLong" : "waitingForShop"], {
    status: 200,
    refreshSeconds: long ? Math.max(retryAfterSeconds, LONG_WAIT_REFRESH_SECONDS) : retryAfterSeconds,
    refreshUrl: `${url.pathname}${url.search}`,
  });
}

/** A link that leads to no payment: said so, and what to do, in the language the browser asks for. */
function notValidPage(request: Request): Response {
  const language = acceptedLanguage(request.headers.get("accept-language"));
  return shopperPage(language, pageTexts(language).linkNotValid, { status: 404 });
}

export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const parsed = paramsSchema.safeParse({ ...params, sig: new URL(request.url).searchParams.get("sig") ?? "" });
  if (!parsed.success) return notValidPage(request);
  const result = await handleShopperReturn(context.services, { paymentId: parsed.data.paymentId, signature: parsed.data.sig, outcome: parsed.data.outcome });
  switch (result.kind) {
    case "redirect":
      return redirect(result.url, 303);
    case "wait":
      return waitingPage(request, result.retryAfterSeconds, result.locale);
    case "shop_notified":
      return shopNotifiedPage(result.retryAfterSeconds, result.locale);
    case "not_found":
      return notValidPage(request);
  }
}
