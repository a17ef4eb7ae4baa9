// A shopper whose browser runs no scripts (or whose page's scripts never arrived) pays on the
// app's own payment page. The page follows the payment by reloading itself, as the return
// link's pages do, under the shopper's control (WCAG 2.2.1): it says how often, offers "Check
// now" and "Stop automatic checks", and once the payment is confirmed a reload takes the shopper
// on to the shop. With scripts, none of it is in force: the page follows the payment by itself.
import { beforeAll, describe, expect, it } from "vitest";
import { fill, pageTexts } from "../../app/payment-page/texts";
import { browserForFile } from "../support/browser";
import { stackForFile, waitFor } from "../support/stack";
import { PHONE, waitForHydration } from "./support/admin";

const stack = stackForFile();
const browser = browserForFile();
const en = pageTexts("en");

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

/** A payment whose coin was picked on the app's page: its page link and its row. */
async function picked() {
  const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "en", amount: "25.00", currency: "EUR" });
  const chosen = await fetch(delivery.redirectUrl!, { method: "POST", body: new URLSearchParams({ symbol: "ETH" }), redirect: "manual" });
  expect(chosen.status).toBe(303);
  const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  return { link: delivery.redirectUrl!, payment };
}

describe("the payment page without scripts", () => {
  it("says it checks again every 15 seconds and offers to stop; once the payment is confirmed, a reload takes the shopper on to the shop", async () => {
    const { link, payment } = await picked();
    const context = await browser().newContext({ javaScriptEnabled: false, viewport: PHONE });
    try {
      const page = await context.newPage();
      await page.goto(link, { waitUntil: "load" });
      expect(await page.locator("#payment-status").textContent()).toBe(en.statuses.waiting);
      // Read from the document (the text engine of the browser driver passes over <noscript>).
      const checks = await page.locator("#payment-status + noscript").innerHTML();
      expect(checks).toContain(fill(en.checking.every, { seconds: "15" }));
      expect(await page.locator('#payment-status + noscript a[href*="paused=1"]').textContent()).toBe(en.checking.stop);
      expect(await page.locator("#payment-status + noscript a.button").textContent()).toBe(en.checking.checkNow);
      expect(await page.locator('meta[http-equiv="refresh"]').getAttribute("content")).toMatch(/^15;url=\/pay\//);

      // The shopper pays in full from their wallet; the network confirms it.
      await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "pay", amount: "exact" });
      await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "confirm" });
      await waitFor(async () => (await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).state === "paid", "the payment to be paid", 30_000);
      // The next reload (15 s at most) goes on to Shopify's order page.
      await page.waitForURL((url) => !url.pathname.startsWith("/pay/"), { timeout: 30_000 });
      expect(page.url().startsWith(stack().standin.origin)).toBe(true);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("with its checks stopped, it reloads no more and offers to start them again", async () => {
    const { link } = await picked();
    const context = await browser().newContext({ javaScriptEnabled: false, viewport: PHONE });
    try {
      const page = await context.newPage();
      await page.goto(link, { waitUntil: "load" });
      await page.locator('#payment-status + noscript a[href*="paused=1"]').click();
      await page.waitForLoadState("load");
      expect(new URL(page.url()).searchParams.get("paused")).toBe("1");
      expect(await page.locator('meta[http-equiv="refresh"]').count()).toBe(0);
      expect(await page.locator("#payment-status + noscript").innerHTML()).toContain(en.checking.paused);
      const resume = page.locator("#payment-status + noscript a.secondary");
      expect(await resume.textContent()).toBe(en.checking.resume);
      expect(new URL(await resume.getAttribute("href") ?? "", page.url()).searchParams.get("paused")).toBeNull();
    } finally {
      await context.close();
    }
  }, 60_000);

  it("with scripts, the page neither reloads itself nor shows those words: it follows the payment by itself", async () => {
    const { link } = await picked();
    const page = await browser().newPage({ viewport: PHONE });
    const errors: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    try {
      await page.goto(link, { waitUntil: "load" });
      await waitForHydration(page);
      expect(await page.locator('meta[http-equiv="refresh"]').count()).toBe(0);
      expect(await page.getByText(fill(en.checking.every, { seconds: "15" })).isVisible()).toBe(false);
      expect(errors.filter((text) => /hydrat/i.test(text))).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);
});
