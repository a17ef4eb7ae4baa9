// A coin that needs a destination tag or memo (XRP, XLM, ALGO) loses the shopper's money when
// it is sent without it (SPEC.md, rule 1). SPEC.md documents the gateway's payment_uri as
// "scheme:<address>?amount=<amount>": nothing says it carries the tag. The app's payment page
// turns that URI into a QR code and an "Open in wallet" link, the two ways a shopper pays in
// one step: each must carry the tag the page asks for, or not be offered (the shopper then
// copies the address, the amount and the tag). Real app server, real database, the sandbox's
// order; only the stored URI is set to the gateway's documented form.
import { beforeAll, describe, expect, it } from "vitest";
import { paymentQrSvg } from "../../app/payment-page/qr.server";
import { stackForFile } from "../support/stack";

const stack = stackForFile();

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

function decode(html: string): string {
  return html.replace(/&amp;/g, "&").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#x27;|&#39;/g, "'");
}

function qr(html: string): string | null {
  const match = /<figure class="qr"[^>]*>(<svg[\s\S]*?<\/svg>)/.exec(html);
  return match ? match[1]!.replace(/\s+/g, "") : null;
}

/** The hrefs of the page's links to a wallet app (any scheme but http(s) and relative ones). */
function walletLinks(html: string): string[] {
  return [...html.matchAll(/<a[^>]*href="([^"]+)"/g)].map((m) => decode(m[1]!)).filter((href) => /^[a-z][a-z0-9+.-]*:/i.test(href) && !/^https?:/i.test(href));
}

describe.each([
  ["XRP", "ripple"],
  ["XLM", "stellar"],
  ["ALGO", "algorand"],
])("%s", (symbol, scheme) => {
  it("the QR code and the wallet link never ask for a payment without the tag/memo the page says is required", async () => {
    const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "en", amount: "25.00", currency: "EUR" });
    expect(delivery.status).toBe(200);
    const chosen = await fetch(delivery.redirectUrl!, { method: "POST", body: new URLSearchParams({ symbol }), redirect: "manual" });
    expect(chosen.status).toBe(303);
    const db = stack().services.db;
    const payment = await db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
    expect(payment.tagMemo).toBeTruthy();
    // The gateway's payment URI in the form SPEC.md documents: address and amount only.
    const documented = `${scheme}:${payment.address}?amount=${payment.cryptoAmount}`;
    await db.payment.update({ where: { id: payment.id }, data: { paymentUri: documented } });

    const html = await (await fetch(new URL(chosen.headers.get("location")!, delivery.redirectUrl!))).text();
    // The page asks for the tag/memo...
    expect(html).toContain(`id="tag-memo"`);
    expect(html).toContain(payment.tagMemo!);
    // ...so no one-step payment request it offers may leave it out.
    for (const link of walletLinks(html)) expect(link, `wallet link ${link}`).toContain(payment.tagMemo!);
    const shown = qr(html);
    if (shown !== null) expect(shown).not.toBe((await paymentQrSvg(documented)).replace(/\s+/g, ""));
  });
});
