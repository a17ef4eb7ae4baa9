// The return link's pages that check again by themselves (while Shopify is being told, and once
// Shopify refused a paid payment's outcome) are plain HTML with no scripts, and reload
// themselves to move on: the shopper is told so in words, in every language the page speaks,
// with how often; "Check now" checks at once; "Stop automatic checks" gives the same page
// without the reload (WCAG 2.2.1, F41), from which the shopper checks when they want, or starts
// the automatic checks again. All of it works in a browser with JavaScript off.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { finalMessageKey } from "../../app/payments/outbox";
import { checkPaymentNow } from "../../app/payments/check-payment";
import { pageLanguage } from "../../app/payment-page/language";
import { fill, pageTexts } from "../../app/payment-page/texts";
import { browserForFile, saveScreenshot } from "../support/browser";
import { stackForFile, waitFor } from "../support/stack";
import { PHONE } from "./support/admin";

const stack = stackForFile();
const browser = browserForFile();

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

afterEach(() => stack().standin.state.clearFaults());

/** A payment in `locale` paid in full (confirming), whose shopper comes back while Shopify's API fails: the return link's waiting page. */
async function waitingForShop(locale: string) {
  const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale, amount: "49.00", currency: "EUR" });
  const chosen = await fetch(delivery.redirectUrl!, { method: "POST", body: new URLSearchParams({ symbol: "ETH" }), redirect: "manual" });
  expect(chosen.status).toBe(303);
  const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "pay", amount: "exact" });
  await checkPaymentNow(stack().services, payment.shopId, payment.id);
  stack().standin.state.setFault({ mode: "http_500", count: 1000 });
  return { session, payment, link: stack().services.links.returnUrl(payment, "standby") };
}

/** A return page as served: its status, Retry-After, meta refresh and links (hrefs resolved against the page). */
async function returnPage(url: string) {
  const answer = await fetch(url, { redirect: "manual" });
  const html = await answer.text();
  const unescape = (text: string) => text.replace(/&amp;/g, "&").replace(/&quot;/g, '"');
  const refresh = /<meta http-equiv="refresh" content="(\d+);url=([^"]+)">/.exec(html);
  const links = Object.fromEntries([...html.matchAll(/<a\b[^>]*href="([^"]+)"[^>]*>([^<]+)<\/a>/g)].map((m) => [unescape(m[2]!), new URL(unescape(m[1]!), url)]));
  return {
    status: answer.status,
    retryAfter: answer.headers.get("retry-after"),
    html,
    refresh: refresh ? { seconds: Number(refresh[1]), url: new URL(unescape(refresh[2]!), url) } : null,
    links,
    linkOrder: [...html.matchAll(/<a\b[^>]*>([^<]+)<\/a>/g)].map((m) => unescape(m[1]!)),
  };
}

describe("the return link's pages that check again by themselves", () => {
  it.each(["en", "es", "pt-PT", "pt-BR", "it", "fr", "de"])("in %s, say that the page updates by itself and how often, and let the shopper check now, or stop the checks and start them again", async (locale) => {
    const texts = pageTexts(pageLanguage(locale)).checking;
    const { link } = await waitingForShop(locale);
    const waiting = await returnPage(link);
    expect(waiting.status).toBe(200);
    expect(waiting.refresh?.seconds).toBe(3);
    expect(waiting.retryAfter).toBe("3");
    expect(waiting.html).toContain(`<p>${fill(texts.every, { seconds: "3" }).replace(/&/g, "&amp;")}<br>`);
    // Stopping comes first: one Tab reaches it before the next reload.
    expect(waiting.linkOrder).toEqual([texts.stop, texts.checkNow]);
    // And right after the heading, before the page's own words: read from the top, it comes before the reload does.
    const body = pageTexts(pageLanguage(locale)).waitingForShop.body;
    const escaped = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
    expect(waiting.html).toMatch(/<\/h1><p>[^<]*<br><a /);
    expect(waiting.html.indexOf(escaped(texts.stop))).toBeLessThan(waiting.html.indexOf(escaped(body)));
    // "Check now" is the reload itself, at once: the same signed link, carrying when the wait began.
    const now = waiting.links[texts.checkNow]!;
    expect(now.toString()).toBe(waiting.refresh!.url.toString());
    expect(now.searchParams.get("sig")).toBe(new URL(link).searchParams.get("sig"));
    expect(now.searchParams.get("waiting")).toMatch(/^\d+$/);

    // Stopped: the same page without the reload, saying it no longer updates by itself.
    const stopped = await returnPage(waiting.links[texts.stop]!.toString());
    expect(stopped.status).toBe(200);
    expect(stopped.refresh).toBeNull();
    expect(stopped.html).not.toContain("http-equiv");
    expect(stopped.retryAfter).toBeNull();
    expect(stopped.html).toContain(texts.paused.replace(/&/g, "&amp;"));
    expect(stopped.html).not.toContain(fill(texts.every, { seconds: "3" }));
    expect(stopped.linkOrder).toEqual([texts.resume, texts.checkNow]);
    // "Check now" checks and stays stopped; starting again brings the reload back, from the same wait.
    const checked = await returnPage(stopped.links[texts.checkNow]!.toString());
    expect(checked.refresh).toBeNull();
    expect(checked.html).toContain(texts.paused.replace(/&/g, "&amp;"));
    const resumed = await returnPage(stopped.links[texts.resume]!.toString());
    expect(resumed.refresh?.seconds).toBe(3);
    expect(resumed.refresh?.url.searchParams.get("waiting")).toBe(now.searchParams.get("waiting"));
    expect(resumed.refresh?.url.searchParams.has("paused")).toBe(false);
  });

  it("says how often once the wait is long (every 15 s), and stopped, stays long and stopped", async () => {
    const texts = pageTexts("en");
    const { link } = await waitingForShop("en");
    const later = new URL(link);
    later.searchParams.set("waiting", String(Math.floor(Date.now() / 1000) - 150));
    const long = await returnPage(later.toString());
    expect(long.html).toContain(texts.waitingLong.body);
    expect(long.refresh?.seconds).toBe(15);
    expect(long.html).toContain(fill(texts.checking.every, { seconds: "15" }));
    const stopped = await returnPage(long.links[texts.checking.stop]!.toString());
    expect(stopped.html).toContain(texts.waitingLong.body);
    expect(stopped.html).toContain(texts.checking.paused);
    expect(stopped.refresh).toBeNull();
  });

  it("once Shopify refused a paid payment's outcome, the page that says the payment was received says it checks every minute, with the same links", async () => {
    const texts = pageTexts("de");
    const { payment } = await waitingForShop("de");
    stack().standin.state.clearFaults();
    await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "confirm" });
    await checkPaymentNow(stack().services, payment.shopId, payment.id);
    const final = await waitFor(() => stack().services.db.outboxMessage.findUnique({ where: { dedupeKey: finalMessageKey(payment.id) } }), "the final call");
    await waitFor(async () => (await stack().services.db.outboxMessage.findUniqueOrThrow({ where: { id: final.id } })).status !== "pending" || null, "the final call sent");
    // What Shopify's refusal leaves: the call failed for good, no order page to send the shopper to.
    await stack().services.db.outboxMessage.update({ where: { id: final.id }, data: { status: "failed" } });
    await stack().services.db.payment.update({ where: { id: payment.id }, data: { shopifyOutcome: null, nextActionUrl: null } });

    const notified = await returnPage(stack().services.links.returnUrl(payment, "ok"));
    expect(notified.status).toBe(200);
    expect(notified.html).toContain(`<title>${texts.shopNotified.title}</title>`);
    expect(notified.refresh?.seconds).toBe(60);
    expect(notified.html).toContain(fill(texts.checking.every, { seconds: "60" }));
    expect(notified.linkOrder).toEqual([texts.checking.stop, texts.checking.checkNow]);
    const stopped = await returnPage(notified.links[texts.checking.stop]!.toString());
    expect(stopped.html).toContain(texts.shopNotified.body);
    expect(stopped.refresh).toBeNull();
  });

  it("with JavaScript off, in Chromium: one Tab reaches 'Stop automatic checks', the stopped page stays put, and 'Check now' moves on to Shopify once it answers", async () => {
    const texts = pageTexts("fr").checking;
    const { session, payment, link } = await waitingForShop("fr");
    const context = await browser().newContext({ viewport: PHONE, javaScriptEnabled: false });
    const page = await context.newPage();
    try {
      await page.goto(link, { waitUntil: "load" });
      expect(await page.getByText(fill(texts.every, { seconds: "3" })).isVisible()).toBe(true);
      await saveScreenshot(page, "return-page-checking");
      await page.keyboard.press("Tab");
      expect(await page.locator(":focus").textContent()).toBe(texts.stop);
      await page.keyboard.press("Enter");
      await page.getByText(texts.paused).waitFor();
      expect(new URL(page.url()).searchParams.get("paused")).toBe("1");

      // Stopped: nothing reloads the page any more.
      let navigations = 0;
      page.on("framenavigated", (frame) => void (frame === page.mainFrame() && navigations++));
      await page.waitForTimeout(4_500);
      expect(navigations).toBe(0);

      // Shopify answers again; the shopper checks: on to the order page.
      stack().standin.state.clearFaults();
      await stack().services.db.outboxMessage.updateMany({ where: { paymentId: payment.id, status: "pending" }, data: { nextAttemptAt: new Date() } });
      await page.getByRole("link", { name: texts.checkNow }).click();
      await page.waitForURL(`${stack().standin.origin}/orders/${session.id}`, { timeout: 30_000 });
    } finally {
      await context.close();
    }
  }, 60_000);
});
