// The hosted payment page (web_url): the shopper picks a currency (variant B)
// or goes straight to the payment data (variant A): QR code, address, exact
// amount, the tag/memo where the chain needs one, a countdown and a live
// status that sends the shopper back to the shop. It also carries the
// sandbox-only simulation controls.
import type { IncomingMessage, ServerResponse } from "node:http";
import QRCode from "qrcode";
import { z } from "zod";
import { CURRENCIES, findCurrency } from "./catalogue.js";
import type { SandboxContext } from "./context.js";
import { limitsInFiat } from "./create-order-input.js";
import { Dec } from "./decimal.js";
import { escapeHtml, readFields, redirect, sendHtml, sendPlainJson } from "./http-kit.js";
import { orderFigures } from "./order-figures.js";
import type { OrderAction, OrderSnapshot } from "./order-service.js";
import { pageLanguage, pageTexts, type PageTexts } from "./pay-page-texts.js";
import type { OrderRecord } from "./store.js";

const PAGE_ACTIONS = ["pay_exact", "pay_less", "pay_more", "confirm_once", "confirm", "fail", "expire", "complete_by_merchant", "delete"] as const;
type PageAction = (typeof PAGE_ACTIONS)[number];

/** Where the shopper is sent for a status, or null to stay on the page. */
export function redirectTarget(order: OrderRecord): string | null {
  switch (order.status) {
    case "CO":
    case "CM":
      return order.urlOk;
    case "EX":
    case "CA":
    case "FA":
    case "IA":
    case "OC":
    case "DE":
      return order.urlKo;
    case "AC":
      return order.urlStandby;
    default:
      return null;
  }
}

function availableActions(s: OrderSnapshot): Set<PageAction> {
  const { order, transactions } = s;
  const out = new Set<PageAction>();
  const lightning = order.currencyId === "BTCL";
  const hasUnconfirmed = transactions.some((t) => !t.confirmed);
  const received = transactions.reduce((sum, t) => sum.plus(t.amount), new Dec(0));
  const remaining = order.cryptoAmount === null ? new Dec(0) : new Dec(order.cryptoAmount).minus(received);
  // An expired Lightning invoice cannot be paid (the order service refuses it): no late payment.
  const canPay = order.status === "PE" || (order.status === "EX" && !lightning) || (order.status === "AC" && remaining.gt(0));
  if (canPay) {
    out.add("pay_exact");
    if (!lightning) {
      out.add("pay_less");
      out.add("pay_more");
    }
  }
  if (order.status === "AC" && hasUnconfirmed) out.add("confirm_once");
  if (order.status === "AC" || (order.status === "EX" && hasUnconfirmed)) out.add("confirm");
  if (order.status === "AC") out.add("fail");
  if (order.status === "NR" || order.status === "PE") out.add("expire");
  if (order.status === "NR" || order.status === "PE" || order.status === "AC") {
    out.add("complete_by_merchant");
    out.add("delete");
  }
  return out;
}

function toOrderAction(action: PageAction): OrderAction {
  switch (action) {
    case "pay_exact":
      return { action: "pay", amount: "exact" };
    case "pay_less":
      return { action: "pay", amount: "less" };
    case "pay_more":
      return { action: "pay", amount: "more" };
    default:
      return { action };
  }
}

const STYLE = `
*{box-sizing:border-box}body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1b1f24;line-height:1.45}
main{max-width:480px;margin:0 auto;padding:16px}
.card{background:#fff;border-radius:12px;padding:16px;margin-bottom:14px;box-shadow:0 1px 3px rgba(0,0,0,.08)}
h1{font-size:1.25rem;margin:0 0 4px}h2{font-size:1.05rem;margin:0 0 10px}
.muted{color:#59636e;font-size:.9rem}.big{font-size:1.4rem;font-weight:700;word-break:break-all}
.currencies{list-style:none;margin:0;padding:0;display:grid;gap:8px}
.currencies button{width:100%;display:flex;align-items:center;gap:10px;padding:10px 12px;border:1px solid #d0d7de;border-radius:10px;background:#fff;font-size:1rem;text-align:left;cursor:pointer;min-height:48px}
.currencies button:disabled{opacity:.55;cursor:not-allowed}.currencies img{width:32px;height:32px}
.qr{display:flex;justify-content:center;margin:8px 0}.qr svg{width:220px;height:220px;max-width:100%}
.field{margin:10px 0}.field label,.field .label{display:block;font-size:.85rem;color:#59636e}
.copyrow{display:flex;gap:8px;align-items:center}.copyrow output,.copyrow code{flex:1;font-family:ui-monospace,monospace;word-break:break-all;background:#f6f8fa;padding:8px;border-radius:8px;font-size:.95rem}
button.copy{padding:8px 10px;border-radius:8px;border:1px solid #d0d7de;background:#fff;min-height:40px}
.memo{border:3px solid #d1242f;background:#fff5f5;border-radius:10px;padding:12px;margin:12px 0}
.memo strong{display:block;font-size:1.5rem;color:#82071e;font-family:ui-monospace,monospace;word-break:break-all}
.status{font-weight:600}.countdown{font-size:1.3rem;font-variant-numeric:tabular-nums}
.controls{border:2px dashed #bf8700;background:#fff8c5}
.controls form{display:inline}.controls button{margin:4px 4px 0 0;padding:10px 12px;border-radius:8px;border:1px solid #9a6700;background:#fff;min-height:44px;font-size:.95rem}
.controls button:disabled{opacity:.45}
.error{background:#ffebe9;border:1px solid #ff8182;padding:10px;border-radius:8px}
a.back{display:inline-block;margin-top:8px}
`;

const SCRIPT = `
(function(){
  var root=document.getElementById('pay');if(!root)return;
  var statusUrl=root.getAttribute('data-status-url');var stay=root.getAttribute('data-stay')==='1';
  var current=root.getAttribute('data-status');var expires=Number(root.getAttribute('data-expires-ms'))||0;
  var offset=Number(root.getAttribute('data-now-ms'))-Date.now();
  var cd=document.getElementById('countdown');var redirecting=false;
  function tick(){if(!cd||!expires)return;var left=Math.max(0,expires-(Date.now()+offset));
    var m=Math.floor(left/60000),s=Math.floor(left%60000/1000);cd.textContent=left>0?(m+':'+(s<10?'0':'')+s):cd.getAttribute('data-expired');
    if(left<=0&&current==='PE')poll();}
  function go(url){if(redirecting||stay||!url)return;redirecting=true;var n=document.getElementById('redirect-note');if(n)n.hidden=false;setTimeout(function(){location.assign(url);},800);}
  function poll(){fetch(statusUrl,{cache:'no-store'}).then(function(r){return r.json();}).then(function(d){
    offset=d.now_ms-Date.now();if(d.status!==current){location.reload();return;}go(d.redirect_url);}).catch(function(){});}
  document.querySelectorAll('button.copy').forEach(function(b){b.addEventListener('click',function(){var t=document.getElementById(b.getAttribute('data-target'));
    if(t&&navigator.clipboard){navigator.clipboard.writeText(t.textContent||'').then(function(){b.textContent=b.getAttribute('data-done');});}});});
  go(root.getAttribute('data-redirect'));tick();setInterval(tick,1000);setInterval(poll,2000);
})();
`;

// The icon link is empty: the browser then asks for no /favicon.ico, which the sandbox does not serve.
function layout(lang: string, title: string, body: string): string {
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main><script>${SCRIPT}</script></body></html>`;
}

async function qrSvg(text: string): Promise<string> {
  return QRCode.toString(text, { type: "svg", margin: 1, errorCorrectionLevel: "M" });
}

function copyField(id: string, label: string, value: string, t: PageTexts): string {
  return `<div class="field"><span class="label" id="${id}-label">${escapeHtml(label)}</span><div class="copyrow">
<code id="${id}" aria-describedby="${id}-label">${escapeHtml(value)}</code>
<button type="button" class="copy" data-target="${id}" data-done="${escapeHtml(t.copied)}" aria-label="${escapeHtml(`${t.copy}: ${label}`)}">${escapeHtml(t.copy)}</button></div></div>`;
}

async function renderPage(ctx: SandboxContext, s: OrderSnapshot, stay: boolean, error: string | null): Promise<string> {
  const { order, device, transactions } = s;
  const lang = pageLanguage(order.language);
  const t = pageTexts(lang);
  const code = order.shortCode;
  const base = `/pay/${code}/`;
  const stayField = stay ? '<input type="hidden" name="stay" value="1">' : "";
  const parts: string[] = [];
  parts.push(`<header class="card"><h1>${escapeHtml(t.title)}</h1>
<p class="muted">${escapeHtml(t.payTo)} ${escapeHtml(device.name)}</p>
<p><span class="muted">${escapeHtml(t.amountDue)}</span><br><span class="big">${escapeHtml(order.fiatAmount)} ${escapeHtml(order.fiat)}</span></p>
${order.notes ? `<p class="muted">${escapeHtml(order.notes)}</p>` : ""}</header>`);
  if (error) parts.push(`<div class="error" role="alert">${escapeHtml(error)}</div>`);

  const target = redirectTarget(order);
  // AC is one status whether or not a block has confirmed the payment yet; only `safe` tells.
  const firstBlock = order.status === "AC" && orderFigures(order, transactions).safe;
  parts.push(`<section class="card" aria-labelledby="status-h"><h2 id="status-h">${escapeHtml(t.status)}</h2>
<p class="status" role="status" aria-live="polite" id="status-text">${escapeHtml(t.statuses[order.status])}</p>
${firstBlock ? `<p class="muted" id="first-block">${escapeHtml(t.firstBlockSeen)}</p>` : ""}
<p id="redirect-note" hidden>${escapeHtml(t.redirecting)}</p>
${target && order.status !== "AC" ? `<a class="back" href="${escapeHtml(target)}">${escapeHtml(t.backToShop)}</a>` : ""}</section>`);

  if (order.status === "NR") {
    const amount = new Dec(order.fiatAmount);
    const items = CURRENCIES.map((c) => {
      const { min, max } = limitsInFiat(c, order.fiat);
      const fits = amount.gte(min) && (max === null || amount.lte(max));
      const why = fits ? "" : ` — ${t.unavailable} (${amount.lt(min) ? `${t.minimum} ${min.toFixed(2)}` : `${t.maximum} ${max?.toFixed(2)}`} ${order.fiat})`;
      return `<li><form method="post" action="${base}actions"><input type="hidden" name="action" value="choose_currency">
<input type="hidden" name="currency" value="${escapeHtml(c.symbol)}">${stayField}
<button type="submit" ${fits ? "" : "disabled"} aria-label="${escapeHtml(`${c.name} (${c.blockchain})${why}`)}" data-symbol="${escapeHtml(c.symbol)}">
<img src="/media/currencies/${encodeURIComponent(c.symbol)}.svg" alt=""><span>${escapeHtml(c.name)} <span class="muted">${escapeHtml(c.symbol)} · ${escapeHtml(c.blockchain)}</span>${escapeHtml(why)}</span></button></form></li>`;
    }).join("");
    parts.push(`<section class="card" aria-labelledby="choose-h"><h2 id="choose-h">${escapeHtml(t.chooseCurrency)}</h2>
<p class="muted">${escapeHtml(t.chooseHelp)}</p><ul class="currencies">${items}</ul></section>`);
  } else if (order.currencyId && order.cryptoAmount && order.paymentUri) {
    const def = findCurrency(order.currencyId);
    const figures = orderFigures(order, transactions);
    const amountText = `${new Dec(order.cryptoAmount).toFixed()} ${order.currencyId}`;
    const block: string[] = [];
    block.push(`<p class="muted">${escapeHtml(t.scanQr)}</p>`);
    block.push(`<figure class="qr" role="img" aria-label="${escapeHtml(t.qrLabel)}">${await qrSvg(order.paymentUri)}</figure>`);
    block.push(copyField("amount", t.exactAmount, amountText, t));
    if (order.tagMemo && def && (def.chain === "ripple" || def.chain === "stellar" || def.chain === "algorand")) {
      const label = t.tagMemo[def.chain];
      block.push(`<div class="memo" role="alert" aria-labelledby="memo-label"><span id="memo-label">${escapeHtml(label)}</span>
<strong id="tag-memo">${escapeHtml(order.tagMemo)}</strong><p>${escapeHtml(t.tagMemoWarning)}</p>
<button type="button" class="copy" data-target="tag-memo" data-done="${escapeHtml(t.copied)}" aria-label="${escapeHtml(`${t.copy}: ${label}`)}">${escapeHtml(t.copy)}</button></div>`);
    }
    if (order.address) block.push(copyField("address", t.address, order.address, t));
    else block.push(copyField("invoice", t.lightningInvoice, order.paymentUri, t));
    if (order.rate) block.push(`<p class="muted">${escapeHtml(t.rate)}: 1 ${escapeHtml(order.currencyId)} = ${escapeHtml(order.rate)} ${escapeHtml(order.fiat)}</p>`);
    if (transactions.length > 0) {
      block.push(`<p>${escapeHtml(t.received)}: ${escapeHtml(figures.received.toFixed())} ${escapeHtml(order.currencyId)} (${escapeHtml(figures.percentage.toFixed(2))} %)</p>`);
    }
    if (order.status === "PE" && order.expiredMs !== null) {
      block.push(`<p><span class="muted" id="countdown-label">${escapeHtml(t.expiresIn)}</span><br>
<span class="countdown" id="countdown" role="timer" aria-labelledby="countdown-label" data-expired="${escapeHtml(t.expired)}">…</span></p>`);
    }
    parts.push(`<section class="card" aria-label="${escapeHtml(t.exactAmount)}">${block.join("\n")}</section>`);
  }

  const available = availableActions(s);
  const buttons = PAGE_ACTIONS.map(
    (a) => `<form method="post" action="${base}actions"><input type="hidden" name="action" value="${a}">${stayField}
<button type="submit" data-action="${a}" ${available.has(a) ? "" : "disabled"}>${escapeHtml(t.actions[a])}</button></form>`,
  ).join("");
  parts.push(`<section class="card controls" aria-labelledby="controls-h"><h2 id="controls-h">${escapeHtml(t.sandboxControls)}</h2>
<p class="muted">${escapeHtml(t.sandboxNote)}</p>${buttons}</section>`);

  const body = `<div id="pay" data-status-url="${base}status.json" data-status="${order.status}" data-stay="${stay ? "1" : "0"}"
data-redirect="${escapeHtml(target ?? "")}" data-expires-ms="${order.status === "PE" ? String(order.expiredMs ?? "") : ""}" data-now-ms="${ctx.clock.now().getTime()}">${parts.join("\n")}</div>`;
  return layout(lang, t.title, body);
}

function notFoundPage(): string {
  return layout("en", "Not found", `<div class="card"><h1>Not found</h1><p>${escapeHtml(pageTexts("en").notFound)}</p></div>`);
}

const formSchema = z.object({
  action: z.union([z.enum(PAGE_ACTIONS), z.literal("choose_currency")]),
  currency: z.string().max(24).optional(),
  stay: z.string().optional(),
});

/** Serves /pay/<code>/, its status.json and its actions. Returns false when the path is not the page's. */
export async function handlePayPage(ctx: SandboxContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const m = /^\/pay\/([0-9a-f]{8})(\/(status\.json|actions)?)?$/.exec(url.pathname);
  if (!m) return false;
  const code = m[1] as string;
  const sub = m[3];
  if (m[2] === undefined) {
    redirect(res, 301, `/pay/${code}/${url.search}`);
    return true;
  }
  const stay = url.searchParams.get("stay") === "1";
  if (sub === "status.json") {
    const s = await ctx.orders.findByShortCode(code);
    if (!s) {
      sendPlainJson(res, 404, { detail: "Not found." });
      return true;
    }
    const f = orderFigures(s.order, s.transactions);
    sendPlainJson(res, 200, {
      identifier: s.order.identifier,
      status: s.order.status,
      status_text: pageTexts(pageLanguage(s.order.language)).statuses[s.order.status],
      percentage: f.percentage.toFixed(2),
      received: f.received.toFixed(),
      redirect_url: redirectTarget(s.order),
      expired_time_ms: s.order.expiredMs,
      now_ms: ctx.clock.now().getTime(),
    });
    return true;
  }
  if (sub === "actions") {
    if (req.method !== "POST") {
      redirect(res, 303, `/pay/${code}/`);
      return true;
    }
    const s = await ctx.orders.findByShortCode(code);
    if (!s) {
      sendHtml(res, 404, notFoundPage());
      return true;
    }
    const parsed = formSchema.safeParse(await readFields(req));
    let error: string | null = null;
    let keepStay = stay;
    if (!parsed.success) error = "Unknown action.";
    else {
      keepStay = parsed.data.stay === "1";
      const action: OrderAction =
        parsed.data.action === "choose_currency"
          ? { action: "choose_currency", currency: parsed.data.currency ?? "" }
          : toOrderAction(parsed.data.action);
      const outcome = await ctx.orders.act(s.order.identifier, action);
      if (!outcome.ok) error = outcome.detail;
    }
    if (error) {
      const fresh = (await ctx.orders.findByShortCode(code)) ?? s;
      sendHtml(res, 409, await renderPage(ctx, fresh, keepStay, error));
      return true;
    }
    redirect(res, 303, `/pay/${code}/${keepStay ? "?stay=1" : ""}`);
    return true;
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405, { Allow: "GET" }).end();
    return true;
  }
  const s = await ctx.orders.findByShortCode(code);
  if (!s) sendHtml(res, 404, notFoundPage());
  else sendHtml(res, 200, await renderPage(ctx, s, stay, null));
  return true;
}
