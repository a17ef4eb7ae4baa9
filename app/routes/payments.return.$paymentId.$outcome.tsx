// Where the gateway sends the shopper back (url_ok, url_ko, url_standby). While Shopify
// cannot be told yet, a page in the payment page's language checks again by itself; once
// Shopify refused a paid payment's outcome, the page says the payment was received.
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

/** A page of its own (no scripts): a heading and a paragraph in the shopper's language. */
function shopperPage(language: PageLanguage, texts: { title: string; heading: string; body: string }, answer: { status: number; refreshSeconds?: number }): Response {
  const refresh = answer.refreshSeconds === undefined ? "" : `\n<meta http-equiv="refresh" content="${answer.refreshSeconds}">`;
  const html = `<!doctype html><html lang="${language}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">${refresh}
<title>${escapeHtml(texts.title)}</title>
<style>body{font-family:system-ui,sans-serif;display:grid;place-items:center;min-height:90vh;margin:0;color:#202223}main{max-width:28rem;padding:1.5rem;text-align:center}</style></head>
<body><main><h1>${escapeHtml(texts.heading)}</h1><p>${escapeHtml(texts.body)}</p></main></body></html>`;
  const headers: Record<string, string> = { "content-type": "text/html; charset=utf-8" };
  if (answer.refreshSeconds !== undefined) headers["retry-after"] = String(answer.refreshSeconds);
  return new Response(html, { status: answer.status, headers });
}

function waitingPage(page: "waitingForShop" | "shopNotified", retryAfterSeconds: number, locale: string | null): Response {
  const language = pageLanguage(locale);
  return shopperPage(language, pageTexts(language)[page], { status: 200, refreshSeconds: retryAfterSeconds });
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
      return waitingPage("waitingForShop", result.retryAfterSeconds, result.locale);
    case "shop_notified":
      return waitingPage("shopNotified", result.retryAfterSeconds, result.locale);
    case "not_found":
      return notValidPage(request);
  }
}
