// Where the gateway sends the shopper back (url_ok, url_ko, url_standby). While Shopify
// cannot be told yet, a page in the payment page's language checks again by itself.
import type { LoaderFunctionArgs } from "@remix-run/node";
import { redirect } from "@remix-run/node";
import { z } from "zod";
import { pageLanguage } from "~/payment-page/language";
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

function waitingPage(retryAfterSeconds: number, locale: string | null): Response {
  const language = pageLanguage(locale);
  const texts = pageTexts(language).waitingForShop;
  const html = `<!doctype html><html lang="${language}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="refresh" content="${retryAfterSeconds}"><title>${escapeHtml(texts.title)}</title>
<style>body{font-family:system-ui,sans-serif;display:grid;place-items:center;min-height:90vh;margin:0;color:#202223}main{max-width:28rem;padding:1.5rem;text-align:center}</style></head>
<body><main><h1>${escapeHtml(texts.heading)}</h1><p>${escapeHtml(texts.body)}</p></main></body></html>`;
  return new Response(html, { status: 200, headers: { "content-type": "text/html; charset=utf-8", "retry-after": String(retryAfterSeconds) } });
}

export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const parsed = paramsSchema.safeParse({ ...params, sig: new URL(request.url).searchParams.get("sig") ?? "" });
  if (!parsed.success) return new Response("This payment link is not valid.", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
  const result = await handleShopperReturn(context.services, { paymentId: parsed.data.paymentId, signature: parsed.data.sig, outcome: parsed.data.outcome });
  switch (result.kind) {
    case "redirect":
      return redirect(result.url, 303);
    case "wait":
      return waitingPage(result.retryAfterSeconds, result.locale);
    case "not_found":
      return new Response("This payment link is not valid.", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
  }
}
