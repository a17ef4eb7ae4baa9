// The app's own payment page (API-gateway mode) in real Chromium on a phone-sized
// screen: the shopper picks XRP, sees the QR code, the exact amount, the address and —
// impossible to miss — the destination tag; the payment arrives on-chain and the page
// takes the shopper back to Shopify's order page, paid. A shopper whose wallet sent too
// little is asked for the rest, exactly, before the time runs out; once it has all
// arrived, nothing more is asked. Also: the page speaks the shopper's language (the
// document's too, as served), a Copy button says "Copied" to assistive technology once it has
// copied, the page refuses a forged link with a page that says what to do, and "pay another
// way" returns to checkout. A coin the gateway refuses leaves the list at once, and a pick
// from the keyboard leaves focus on the payment's heading.
import Decimal from "decimal.js";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { browserForFile, saveScreenshot } from "../support/browser";
import { pageTexts } from "../../app/payment-page/texts";
import { createOrderWithCurrency } from "../../app/payments/start-payment-session";
import { stackForFile, waitFor } from "../support/stack";
import { PHONE, waitForHydration } from "./support/admin";
import { recordCopies } from "./support/clipboard";
import { payFromCheckout } from "./support/checkout";
import { saveDocScreenshot } from "./support/screenshots";

const stack = stackForFile();
const browser = browserForFile();
const en = pageTexts("en");

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

/** The markup a browser shows before any script runs (the scripts carry the route's data, texts included). */
function shown(html: string): string {
  return html.replace(/<script\b[\s\S]*?<\/script>/g, "").replace(/<!-- -->/g, "");
}

/** What has focus: the element's id, "body" when focus is lost to the document. */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const active = document.activeElement;
    return active === null || active === document.body ? "body" : active.id || active.outerHTML.slice(0, 80);
  });
}

async function paymentOf(sessionId: string) {
  return stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: sessionId } });
}

/** The order as the gateway itself reports it. */
async function gatewayOrder(orderId: string) {
  const shop = await stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  const access = stack().services.gateways.forShop(shop, "sandbox");
  if (!access) throw new Error("the test shop has no sandbox device");
  const read = await access.client.orderInfo(orderId);
  if (read.isErr()) throw new Error(`order read failed: ${read.error.kind}`);
  return read.value;
}

describe("the app's own payment page", () => {
  it("pays with XRP: the tag is shown with its warning, and the shopper lands on Shopify's order page, paid", async () => {
    const page = await browser().newPage({ viewport: PHONE });
    const copies = await recordCopies(page);
    const sessionId = await payFromCheckout(page, stack(), { amount: "49.90", currency: "EUR", locale: "en" });
    await page.waitForURL(`${stack().app.url}/pay/**`);
    await waitForHydration(page);
    await page.getByRole("heading", { name: "Choose a cryptocurrency" }).waitFor();
    expect((await paymentOf(sessionId)).gatewayOrderId).toBeNull();
    await saveScreenshot(page, "app-payment-page-choose");

    await page.getByRole("button", { name: /^Pay with Ripple XRP/ }).click();
    const memo = page.locator("#tag-memo");
    await memo.waitFor();
    const payment = await paymentOf(sessionId);
    expect(payment.inputCurrency).toBe("XRP");
    const order = await gatewayOrder(payment.gatewayOrderId!);
    expect(order.currency_id).toBe("XRP");
    expect(order.tag_memo).toMatch(/^\d+$/);

    // The tag, the address and the exact amount are the order's own, and the tag cannot be missed.
    expect(await memo.textContent()).toBe(order.tag_memo);
    expect(await page.locator("#address").textContent()).toBe(order.address);
    expect(await page.getByRole("alert").filter({ hasText: "Destination tag" }).isVisible()).toBe(true);
    expect(await page.getByText("Without it your funds are lost").isVisible()).toBe(true);
    // The amount alone, as a wallet's amount field takes it; the coin is written next to it.
    expect(await page.locator("#amount").textContent()).toBe(payment.cryptoAmount);
    expect(await page.locator("#amount-unit").textContent()).toBe("XRP");
    expect(await page.locator(".qr svg").count()).toBe(1);
    // A phone cannot scan its own screen: the same request opens the wallet app.
    expect(await page.getByRole("link", { name: "Open in a wallet app" }).getAttribute("href")).toBe(payment.paymentUri);
    expect(payment.paymentUri).toMatch(new RegExp(`^ripple:${order.address}\\?amount=${payment.cryptoAmount}&dt=${order.tag_memo}$`));
    await expect.poll(() => page.locator("#countdown").textContent()).toMatch(/^\d+:\d{2}$/);
    expect(await page.getByRole("status").textContent()).toBe("Waiting for your payment.");
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await saveDocScreenshot(page, "payment-page");
    // Once copied, the button's accessible name says so, and a live region announces it.
    await page.getByRole("button", { name: "Copy: Exact amount to send" }).click();
    await page.getByRole("button", { name: "Copied: Exact amount to send" }).filter({ hasText: "Copied" }).waitFor();
    expect(await page.locator("[aria-live=polite]", { hasText: "Copied: Exact amount to send" }).count()).toBe(1);
    expect(await page.getByRole("button", { name: "Copy: Destination tag" }).count()).toBe(1);
    expect(await copies()).toEqual([payment.cryptoAmount]);

    await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "pay", amount: "exact" });
    await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "confirm" });
    await page.waitForURL(`${stack().standin.origin}/orders/${sessionId}`, { timeout: 30_000 });
    await page.getByText("Thank you! Your order is confirmed.").waitFor({ timeout: 30_000 });
    await saveScreenshot(page, "app-payment-page-back-in-shop");
    expect(stack().standin.state.session(sessionId)?.state.code).toBe("RESOLVED");
    expect((await paymentOf(sessionId)).state).toBe("paid");
  }, 180_000);

  it("asks a shopper who sent too little for the rest: what arrived, the exact amount still due and the time left", async () => {
    const page = await browser().newPage({ viewport: PHONE });
    const copies = await recordCopies(page);
    const sessionId = await payFromCheckout(page, stack(), { amount: "49.00", currency: "EUR", locale: "en" });
    await page.waitForURL(`${stack().app.url}/pay/**`);
    await waitForHydration(page);
    await page.getByRole("button", { name: /^Pay with Ethereum ETH/ }).click();
    await page.locator("#amount").waitFor();
    const payment = await paymentOf(sessionId);
    const orderId = payment.gatewayOrderId!;

    // A wallet that takes its fee from the amount: about half arrives.
    await stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, { action: "pay", amount: "less" });
    const status = page.getByRole("status");
    await expect.poll(() => status.textContent(), { timeout: 30_000 }).toBe("Part of the amount has arrived. Please send the rest.");
    const order = await gatewayOrder(orderId);
    expect(order.status.code).toBe("AC");
    const arrived = new Decimal(order.unconfirmed_amount).plus(order.confirmed_amount);
    const due = new Decimal(order.crypto_amount!).minus(arrived);
    expect(due.gt(0)).toBe(true);

    // What arrived, in the coin, in the shop's money and as a percentage, in the page's notation.
    const received = page.getByText(/^Received:/);
    expect(await received.textContent()).toBe(`Received: ${arrived.toFixed()} ETH (€24.50; ${order.percentage}%)`);
    // What is still due: exact, copied bare, with the countdown still running.
    expect(await page.locator("#remaining").textContent()).toBe(due.toFixed());
    expect(await page.locator("#remaining-unit").textContent()).toBe("ETH");
    expect(await page.locator("#amount").count()).toBe(0);
    await page.getByRole("button", { name: "Copy: Amount still to send" }).click();
    await expect.poll(copies).toEqual([due.toFixed()]);
    expect(await page.locator(".qr svg").count()).toBe(1);
    // The wallet link asks for the rest too, as the QR code does.
    expect(await page.getByRole("link", { name: "Open in a wallet app" }).getAttribute("href")).toMatch(new RegExp(`amount=${due.toFixed().replace(".", "\\.")}(&|$)`));
    await expect.poll(() => page.locator("#countdown").textContent()).toMatch(/^\d+:\d{2}$/);
    expect(await page.getByText("Payment received").count()).toBe(0);
    expect(await page.getByRole("link", { name: "Return to the shop" }).count()).toBe(0);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await saveScreenshot(page, "app-payment-page-partial");

    // The rest arrives (the gateway notifies no change while the order stays AC): the page sees it.
    await stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, { action: "pay", amount: due.toFixed() });
    await expect.poll(() => status.textContent(), { timeout: 45_000 }).toBe("Payment received. Waiting for the network to confirm it.");
    // Nothing more to send: no amount, QR code, address or Copy button is left to pay twice with.
    for (const selector of ["#remaining", "#amount", ".qr", "#address", "button.copy", "a.button[href^='ethereum:']"]) expect(await page.locator(selector).count(), selector).toBe(0);
    expect(await page.getByRole("link", { name: "Return to the shop" }).count()).toBe(1);
    await stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, { action: "confirm" });
    await page.waitForURL(`${stack().standin.origin}/orders/${sessionId}`, { timeout: 30_000 });
    expect((await paymentOf(sessionId)).state).toBe("paid");
  }, 180_000);

  it("speaks the shopper's language", async () => {
    const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "es" });
    expect(delivery.status).toBe(200);
    const html = await (await fetch(delivery.redirectUrl!)).text();
    expect(html).toContain("Elige una criptomoneda");
    expect(html).toContain("Quiero pagar de otra forma");
    expect(html).not.toContain("Choose a cryptocurrency");
    expect((await paymentOf(session.id)).merchantLocale).toBe("es");
  });

  it("answers 404 to a link whose signature does not match, for the page and its status", async () => {
    const { delivery } = await stack().standin.state.startPayment({ test: true, locale: "en" });
    const url = new URL(delivery.redirectUrl!);
    const forged = new URL(url);
    forged.searchParams.set("sig", "A".repeat(43));
    expect((await fetch(forged)).status).toBe(404);
    const status = new URL(`${url.pathname}/status${forged.search}`, url);
    expect((await fetch(status)).status).toBe(404);
    const unsigned = new URL(url.pathname, url);
    expect((await fetch(unsigned)).status).toBe(404);
    // The genuine link works, and its status answers JSON.
    expect((await fetch(url)).status).toBe(200);
    const live = (await (await fetch(new URL(`${url.pathname}/status${url.search}`, url))).json()) as { stage: string; status: string };
    expect(live).toMatchObject({ stage: "choose", status: "choosing" });
  });

  it("sends a shopper who wants to pay another way back to Shopify's checkout, with nothing created at the gateway", async () => {
    const page = await browser().newPage({ viewport: PHONE });
    const sessionId = await payFromCheckout(page, stack(), { amount: "12.00", currency: "EUR", locale: "fr" });
    await page.waitForURL(`${stack().app.url}/pay/**`);
    await waitForHydration(page);
    await expect.poll(() => page.evaluate(() => document.documentElement.lang)).toBe("fr");
    await page.getByRole("link", { name: "Je veux payer autrement" }).click();
    await page.waitForURL(`${stack().standin.origin}/checkout/cancelled/**`);
    await page.getByText("You left the payment page").waitFor();
    expect((await paymentOf(sessionId)).gatewayOrderId).toBeNull();
  }, 60_000);

  /** A shopper at the checkout sent to the app's payment page (hydrated): their page, its address and the session. */
  async function onPaymentPage(amount: string) {
    const page = await browser().newPage({ viewport: PHONE });
    const sessionId = await payFromCheckout(page, stack(), { amount, currency: "EUR", locale: "en" });
    await page.waitForURL(`${stack().app.url}/pay/**`);
    const payPage = page.url();
    await waitForHydration(page);
    return { page, payPage, sessionId };
  }

  it("sends a shopper who picked a coin, then chose to pay another way, back to the checkout when they return to the page: the order they left is offered no more", async () => {
    const { page, payPage, sessionId } = await onPaymentPage("21.00");
    await page.getByRole("button", { name: /^Pay with Ripple XRP/ }).click();
    await page.locator("#address").waitFor();
    await page.getByRole("link", { name: "I want to pay another way" }).click();
    await page.waitForURL(`${stack().standin.origin}/checkout/cancelled/**`);

    // The browser's back button (the page may come back from its cache, and its live status takes it on), then the link itself.
    await page.goBack();
    await page.waitForURL(`${stack().standin.origin}/checkout/cancelled/**`);
    await page.goto(payPage);
    await page.waitForURL(`${stack().standin.origin}/checkout/cancelled/**`);
    expect(await page.locator("#address").count()).toBe(0);
    // Its live status, which a page left open in another tab polls, says the same.
    const status = (await (await fetch(`${payPage.replace(/\?.*$/, "")}/status?${new URL(payPage).searchParams}`)).json()) as { redirectUrl: string | null };
    expect(status.redirectUrl).toMatch(new RegExp(`^${stack().standin.origin}/checkout/cancelled/`));
    expect((await paymentOf(sessionId)).state).toBe("awaiting_payment");
  }, 90_000);

  it("sends a shopper who chose to pay another way before picking a coin back to the checkout if they come back and pick one: no order is made", async () => {
    const { page, payPage, sessionId } = await onPaymentPage("22.00");
    await page.getByRole("heading", { name: "Choose a cryptocurrency" }).waitFor();
    await page.getByRole("link", { name: "I want to pay another way" }).click();
    await page.waitForURL(`${stack().standin.origin}/checkout/cancelled/**`);
    // The coin list as it was, posted again (a tab left open).
    const picked = await fetch(payPage, { method: "POST", body: new URLSearchParams({ symbol: "XRP" }), redirect: "manual" });
    expect(picked.status).toBe(303);
    expect((await paymentOf(sessionId)).gatewayOrderId).toBeNull();
    const followed = await fetch(new URL(picked.headers.get("location")!, payPage), { redirect: "manual" });
    expect(followed.status).toBe(303);
    expect(followed.headers.get("location")).toMatch(new RegExp(`^${stack().standin.origin}/checkout/cancelled/`));
  }, 90_000);

  it("loads a page the browser brings back from its cache again: a shopper who left the payment in another tab is taken to the checkout, not shown the QR code", async () => {
    const { page } = await onPaymentPage("23.00");
    await page.getByRole("button", { name: /^Pay with Ripple XRP/ }).click();
    await page.locator("#address").waitFor();
    // "Pay another way" followed elsewhere (another tab), this page left as it was.
    const anotherWay = await page.getByRole("link", { name: "I want to pay another way" }).getAttribute("href");
    expect((await fetch(new URL(anotherWay!, page.url()), { redirect: "manual" })).status).toBe(303);
    // Its live status is not what takes it on here: as a restored page whose polling had stopped.
    await page.route("**/status?**", (route) => route.abort());
    // What the browser fires when it shows the page from its back/forward cache.
    await page.evaluate(() => window.dispatchEvent(new PageTransitionEvent("pageshow", { persisted: true })));
    await page.waitForURL(`${stack().standin.origin}/checkout/cancelled/**`, { timeout: 20_000 });
  }, 90_000);

  it("records a shopper leaving only for a payment still open: one that ended unpaid before a coin was picked, whose page sends the shopper through the same link, records nothing", async () => {
    const leftEvents = (paymentId: string) => stack().services.db.paymentEvent.count({ where: { paymentId, type: "shopper_abandoned" } });
    const started = async () => {
      const { session, delivery } = await stack().standin.state.startPayment({ test: true });
      expect(delivery.status).toBe(200);
      return paymentOf(session.id);
    };
    const open = await started();
    const left = await fetch(stack().services.links.returnUrl(open, "ko"), { redirect: "manual" });
    expect(left.headers.get("location")).toBe(open.cancelUrl);
    expect(await leftEvents(open.id)).toBe(1);

    const ended = await started();
    await stack().services.db.payment.update({ where: { id: ended.id }, data: { state: "failed" } });
    for (let i = 0; i < 2; i++) {
      const back = await fetch(stack().services.links.returnUrl(ended, "ko"), { redirect: "manual" });
      expect(back.status).toBe(303);
    }
    expect(await leftEvents(ended.id)).toBe(0);
  });

  it("shows a Lightning invoice, and no address, for BTCL (also without JavaScript)", async () => {
    const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "en", amount: "25.00", currency: "EUR" });
    const chosen = await fetch(delivery.redirectUrl!, { method: "POST", body: new URLSearchParams({ symbol: "BTCL" }), redirect: "manual" });
    expect(chosen.status).toBe(303);
    const payment = await paymentOf(session.id);
    expect(payment.inputCurrency).toBe("BTCL");
    expect(payment.paymentUri).toMatch(/^lnbc/);
    const html = await (await fetch(new URL(chosen.headers.get("location")!, delivery.redirectUrl!))).text();
    expect(html).toContain("Lightning invoice");
    expect(html).toContain(payment.paymentUri!);
    expect(html).not.toContain('id="address"');
    expect(html).not.toContain('id="tag-memo"');
  });

  it("gives a phone a link that opens the Lightning invoice in a wallet app (lightning:<invoice>), as it does the payment URI of an on-chain coin", async () => {
    const picked = async (symbol: string) => {
      const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "en", amount: "25.00", currency: "EUR" });
      const chosen = await fetch(delivery.redirectUrl!, { method: "POST", body: new URLSearchParams({ symbol }), redirect: "manual" });
      expect(chosen.status).toBe(303);
      const html = shown(await (await fetch(new URL(chosen.headers.get("location")!, delivery.redirectUrl!))).text());
      return { payment: await paymentOf(session.id), html };
    };
    const onChain = await picked("BTC");
    expect(onChain.html).toContain(`<a class="button" href="${onChain.payment.paymentUri!.replace(/&/g, "&amp;")}">${en.openInWallet}</a>`);

    const lightning = await picked("BTCL");
    // The gateway gives the bare invoice, which the QR code shows as it is.
    expect(lightning.payment.paymentUri).toMatch(/^lnbc[0-9a-z]+$/);
    expect(lightning.html).toContain('class="qr"');
    expect(lightning.html).toContain(`<a class="button" href="lightning:${lightning.payment.paymentUri}">${en.openInWallet}</a>`);
  });

  it("refuses a coin the page does not offer", async () => {
    await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { sandboxOfferedCurrencies: JSON.stringify(["XRP", "BTC"]) } });
    try {
      const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "en" });
      const html = await (await fetch(delivery.redirectUrl!)).text();
      expect(html).toContain("Ripple XRP");
      expect(html).not.toContain("Ethereum ETH");
      const refused = await fetch(delivery.redirectUrl!, { method: "POST", body: new URLSearchParams({ symbol: "ETH" }), redirect: "manual" });
      expect(refused.status).toBe(400);
      expect((await paymentOf(session.id)).gatewayOrderId).toBeNull();
    } finally {
      await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { sandboxOfferedCurrencies: "[]" } });
    }
  });

  it("reads the gateway at most once per 15 seconds however many status polls arrive", async () => {
    const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "en" });
    const url = new URL(delivery.redirectUrl!);
    const chosen = await createOrderWithCurrency(stack().services, (await paymentOf(session.id)).id, "ETH");
    expect(chosen).toMatchObject({ ok: true });
    const payment = await paymentOf(session.id);
    const gatewayCalls = () => stack().services.db.gatewayCall.count();
    // Let the order's creation notification be processed before counting.
    await waitFor(async () => (await stack().services.db.gatewayWebhook.count({ where: { processedAt: null } })) === 0, "an idle inbox");
    let settled = await gatewayCalls();
    await waitFor(async () => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const now = await gatewayCalls();
      const quiet = now === settled;
      settled = now;
      return quiet;
    }, "no gateway calls in flight");

    // Last read two minutes ago: the page may look again, once.
    await stack().services.db.payment.update({ where: { id: payment.id }, data: { lastCheckedAt: new Date(Date.now() - 120_000) } });
    const statusUrl = new URL(`${url.pathname}/status${url.search}`, url);
    const poll = () => Promise.all(Array.from({ length: 8 }, () => fetch(statusUrl).then((r) => r.json() as Promise<{ stage: string; expiresAtMs: number | null }>)));
    const first = await poll();
    expect(first.map((live) => live.stage)).toEqual(Array(8).fill("pay"));
    // The one poll that read the gateway brought the order's expiry.
    expect(first.some((live) => typeof live.expiresAtMs === "number")).toBe(true);
    expect((await gatewayCalls()) - settled).toBe(1);
    await poll();
    expect((await gatewayCalls()) - settled).toBe(1);
  });

  it("declares the payment page's language on the document as served, and English on pages that name none", async () => {
    for (const locale of ["es", "de", "fr"]) {
      const { delivery } = await stack().standin.state.startPayment({ test: true, locale });
      const html = await (await fetch(delivery.redirectUrl!)).text();
      expect(html, locale).toContain(`<div class="pp" lang="${locale}">`);
      expect(html, locale).toMatch(new RegExp(`^<!DOCTYPE html><html lang="${locale}"`, "i"));
    }
    const home = await (await fetch(`${stack().app.url}/`)).text();
    expect(home).toMatch(/^<!DOCTYPE html><html lang="en"/i);
  });

  it("tells a shopper whose link is not valid (forged, another payment's, malformed) so, and what to do, with a 404 and nothing of why", async () => {
    const { delivery } = await stack().standin.state.startPayment({ test: true, locale: "en" });
    const other = await stack().standin.state.startPayment({ test: true, locale: "en" });
    const url = new URL(delivery.redirectUrl!);
    const forged = `${url.origin}${url.pathname}?sig=${"A".repeat(43)}`;
    const tries: Array<{ what: string; link: string; init?: RequestInit }> = [
      { what: "forged", link: forged },
      { what: "another payment's", link: `${url.origin}${url.pathname}${new URL(other.delivery.redirectUrl!).search}` },
      { what: "malformed", link: `${url.origin}${url.pathname}?sig=%25%00` },
      { what: "forged, a coin picked", link: forged, init: { method: "POST", body: new URLSearchParams({ symbol: "ETH" }) } },
    ];
    for (const { what, link, init } of tries) {
      const answer = await fetch(link, init);
      expect(answer.status, what).toBe(404);
      const html = shown(await answer.text());
      expect(html, what).toContain('<h1 id="error-heading">This payment link is not valid.</h1>');
      expect(html, what).toContain("Go back to the shop&#x27;s checkout and choose the payment method again to get a new link.");
      expect(html, what).toContain("If you already sent crypto for this order, do not pay again: contact the shop.");
      expect(html, what).toContain("<title>Payment link not valid</title>");
      expect(html, what).not.toContain("Unhandled Thrown Response");
      expect(html, what).not.toContain("404");
    }
    // In the language the shopper's browser asks for, when the page speaks it.
    const german = shown(await (await fetch(forged, { headers: { "accept-language": "fr-CH;q=0.5, de-DE, en;q=0.8" } })).text());
    expect(german).toContain(`<div class="pp" lang="de">`);
    expect(german).toContain("Dieser Zahlungslink ist nicht gültig.");
  });

  it("shows a token's order (USDC on Ethereum) as its address and amount, with no QR code or wallet link: a wallet reads the gateway's ethereum: URI as ether", async () => {
    const { delivery } = await stack().standin.state.startPayment({ test: true, locale: "en", amount: "49.90", currency: "EUR" });
    const page = await browser().newPage({ viewport: PHONE });
    await page.goto(delivery.redirectUrl!, { waitUntil: "load" });
    await waitForHydration(page);
    await page.locator('ul.coins button[value="USDC_ERC20"]').click();
    await page.locator("#address").waitFor();
    const payment = await stack().services.db.payment.findFirstOrThrow({ where: { gatewayOrderId: { not: null }, inputCurrency: "USDC_ERC20", amount: "49.90" }, orderBy: { createdAt: "desc" } });
    // The gateway's URI asks for the amount in the chain's own coin.
    expect(payment.paymentUri).toBe(`ethereum:${payment.address}?amount=${payment.cryptoAmount}`);
    expect(await page.locator("#address").textContent()).toBe(payment.address);
    expect(await page.locator("#amount").textContent()).toBe(payment.cryptoAmount);
    expect(await page.locator("#amount-unit").textContent()).toBe("USDC_ERC20");
    expect(await page.getByText("Send only USDC_ERC20 on the ETH network to this address.").isVisible()).toBe(true);
    expect(await page.locator(".qr").count()).toBe(0);
    expect(await page.locator("a[href^='ethereum:']").count()).toBe(0);
    expect(await page.getByRole("link", { name: "Open in a wallet app" }).count()).toBe(0);
    await page.close();
  }, 60_000);

  it("takes a coin the gateway refuses for the amount off the list at once, with the coins the refusal rules out, and keeps the refusal shown", async () => {
    // 5.00 USD: the limits are not compared before the pick (they are stated in EUR); the
    // gateway refuses USDC_ERC20 (minimum 10.80 USD), which rules out USDT_ERC20 (same minimum).
    const { delivery } = await stack().standin.state.startPayment({ test: true, locale: "en", amount: "5.00", currency: "USD" });
    const page = await browser().newPage({ viewport: PHONE });
    await page.goto(delivery.redirectUrl!, { waitUntil: "load" });
    await waitForHydration(page);
    const coinButton = (symbol: string) => page.locator(`ul.coins button[value="${symbol}"]`);
    expect(await coinButton("USDC_ERC20").count()).toBe(1);
    expect(await coinButton("USDT_ERC20").count()).toBe(1);

    await coinButton("USDC_ERC20").click();
    const refusal = page.getByRole("alert").filter({ hasText: en.errors.outOfLimits });
    await refusal.waitFor({ timeout: 30_000 });
    await page.waitForFunction(() => !document.querySelector("ul.coins button[disabled]"));
    // The server no longer offers either coin, and the page the shopper is looking at agrees.
    const served = await (await fetch(delivery.redirectUrl!)).text();
    expect(served).not.toContain('value="USDC_ERC20"');
    expect(served).not.toContain('value="USDT_ERC20"');
    expect(await coinButton("USDC_ERC20").count()).toBe(0);
    expect(await coinButton("USDT_ERC20").count()).toBe(0);
    expect(await coinButton("ETH").count()).toBe(1);
    // The refusal, with the gateway's reason, stays shown; the pressed button went away, focus is on it.
    expect(await refusal.textContent()).toContain("The payment service says:");
    expect(await focused(page)).toBe("pick-error");
    await page.close();
  }, 120_000);

  it("leaves focus on the payment's heading once a coin is picked from the keyboard, and moves none on a first load", async () => {
    const { delivery } = await stack().standin.state.startPayment({ test: true, locale: "en", amount: "20.00", currency: "EUR" });
    const page = await browser().newPage({ viewport: PHONE });
    await page.goto(delivery.redirectUrl!, { waitUntil: "load" });
    await waitForHydration(page);
    expect(await focused(page)).toBe("body");
    await page.getByRole("button", { name: /^Pay with Ethereum ETH/ }).focus();
    await page.keyboard.press("Enter");
    await page.locator("#amount").waitFor({ timeout: 30_000 });
    expect(await focused(page)).toBe("pay-heading");
    expect(await page.locator("#pay-heading").textContent()).toBe("Pay with ETH");
    // The same page loaded afresh leaves focus where the browser puts it.
    await page.reload({ waitUntil: "load" });
    await waitForHydration(page);
    await page.locator("#amount").waitFor();
    expect(await focused(page)).toBe("body");
    await page.close();
  }, 120_000);
});
