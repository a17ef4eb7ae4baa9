// For every coin of the sandbox catalogue, at its smallest, an ordinary and its largest
// amount, the app's payment page shows exactly the gateway's address, amount and tag/memo,
// and its QR code encodes exactly the gateway's payment URI: compared with the gateway's
// own hosted page, which draws the same URI with the same QR options. A token's URI, which a
// wallet reads as the chain's own coin, is drawn by neither the QR code nor a wallet link.
import Decimal from "decimal.js";
import { beforeAll, describe, expect, it } from "vitest";
import { CURRENCIES } from "../../sandbox/catalogue";
import { stackForFile } from "../support/stack";

const stack = stackForFile();

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

function decode(html: string): string {
  return html.replace(/&amp;/g, "&").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#x27;|&#39;/g, "'");
}

/** The text of the `tag` element with this id, or null. */
function byId(html: string, tag: string, id: string): string | null {
  const match = new RegExp(`<${tag}[^>]*id="${id}"[^>]*>([^<]*)</${tag}>`).exec(html);
  return match ? decode(match[1]!) : null;
}

/** The QR code's SVG, whitespace left out. */
function qr(html: string): string | null {
  const match = /<figure class="qr"[^>]*>(<svg[\s\S]*?<\/svg>)/.exec(html);
  return match ? match[1]!.replace(/\s+/g, "") : null;
}

/** The catalogue's tokens: coins of a chain that has a coin of its own (ether, POL, TRX). */
const TOKENS = new Set(["USDC_ERC20", "USDC_POLYGON", "USDT_TRC20", "USDT_ERC20"]);

const cases = CURRENCIES.flatMap((coin) => {
  const max = coin.maxAmountEur ? new Decimal(coin.maxAmountEur) : new Decimal("50000");
  return [new Decimal(coin.minAmountEur).toFixed(2), "123.47", max.toFixed(2)].map((amount) => ({ symbol: coin.symbol, amount }));
});

describe("what to pay, for every coin", () => {
  it.each(cases)("$symbol at $amount EUR: the gateway's own address, amount, tag/memo and payment URI", async ({ symbol, amount }) => {
    const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "en", amount, currency: "EUR" });
    expect(delivery.status).toBe(200);
    const chosen = await fetch(delivery.redirectUrl!, { method: "POST", body: new URLSearchParams({ symbol }), redirect: "manual" });
    expect(chosen.status).toBe(303);
    const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
    const appHtml = await (await fetch(new URL(chosen.headers.get("location")!, delivery.redirectUrl!))).text();
    const gatewayHtml = await (await fetch(payment.gatewayWebUrl!)).text();

    // The gateway's page writes the amount as "<n> <COIN>"; its QR code draws payment_uri.
    const gatewayAmount = byId(gatewayHtml, "code", "amount")!.replace(` ${symbol}`, "");
    const uri = payment.paymentUri!;
    if (TOKENS.has(symbol)) {
      // A wallet reads the token's ethereum:/polygon:/tron: URI as the chain's own coin: the
      // app draws no QR code and gives no wallet link (the gateway's own page still draws it).
      expect(qr(appHtml)).toBeNull();
      expect(appHtml).not.toContain(`href="${uri.split(":")[0]}:`);
      expect(qr(gatewayHtml)).toMatch(/^<svg/);
    } else {
      expect(qr(appHtml)).toMatch(/^<svg/);
      expect(qr(appHtml)).toBe(qr(gatewayHtml));
    }
    if (symbol === "BTCL") {
      expect(byId(appHtml, "code", "invoice")).toBe(uri);
      return;
    }
    // Exactly what to send, in plain digits: the gateway's amount, and the URI's.
    const shown = byId(appHtml, "code", "amount")!;
    expect(shown).toMatch(/^\d+(\.\d+)?$/);
    expect(new Decimal(shown).eq(gatewayAmount)).toBe(true);
    const uriAmount = /[?&]amount=([^&]+)/.exec(uri)![1]!;
    expect(new Decimal(shown).eq(uriAmount)).toBe(true);
    expect(byId(appHtml, "code", "address")).toBe(byId(gatewayHtml, "code", "address"));
    expect(uri).toContain(byId(appHtml, "code", "address")!);
    const gatewayMemo = byId(gatewayHtml, "strong", "tag-memo");
    expect(byId(appHtml, "strong", "tag-memo")).toBe(gatewayMemo);
    if (gatewayMemo) expect(uri).toContain(gatewayMemo);
  });
});
