// Picking a coin with the payment page's plain HTML form: without JavaScript, or before the
// page's scripts have arrived on a slow phone. The browser posts the form itself; the shopper
// gets the address, amount and tag to pay with, never a browser error page (a shopper's page
// sent under a no-referrer policy is posted with `Origin: null`, which Remix refuses as a
// cross-site post).
import { beforeAll, describe, expect, it } from "vitest";
import { browserForFile } from "../support/browser";
import { stackForFile } from "../support/stack";
import { PHONE } from "./support/admin";

const stack = stackForFile();
const browser = browserForFile();

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

async function paymentOf(sessionId: string) {
  return stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: sessionId } });
}

describe("picking a coin with the page's plain HTML form", () => {
  it("works without JavaScript: the shopper gets the address, exact amount and tag, not a browser error page", async () => {
    const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "en", amount: "25.00", currency: "EUR" });
    const context = await browser().newContext({ javaScriptEnabled: false, viewport: PHONE });
    try {
      const page = await context.newPage();
      const posted: number[] = [];
      page.on("response", (response) => {
        if (response.request().method() === "POST") posted.push(response.status());
      });
      await page.goto(delivery.redirectUrl!, { waitUntil: "load" });
      expect(page.url()).toBe(delivery.redirectUrl!);
      await page.locator('ul.coins button[value="XRP"]').click();
      await page.waitForLoadState("load");

      // The pick's answer: a redirect back to the page (303), never a 500.
      expect(posted).toEqual([303]);
      expect(page.url()).toBe(delivery.redirectUrl!);
      const payment = await paymentOf(session.id);
      expect(payment.inputCurrency).toBe("XRP");
      expect(await page.locator("#amount").textContent()).toBe(payment.cryptoAmount);
      expect(await page.locator("#tag-memo").textContent()).toBe(payment.tagMemo);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("works when the shopper taps a coin before the page's scripts have arrived (a slow phone network)", async () => {
    const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "en", amount: "25.00", currency: "EUR" });
    const context = await browser().newContext({ viewport: PHONE });
    try {
      const page = await context.newPage();
      // The page's scripts reach the phone 10 seconds after its HTML.
      await page.route("**/*", async (route) => {
        if (route.request().resourceType() === "script") await new Promise((resolve) => setTimeout(resolve, 10_000));
        await route.continue().catch(() => undefined);
      });
      const posted: number[] = [];
      page.on("response", (response) => {
        if (response.request().method() === "POST") posted.push(response.status());
      });
      await page.goto(delivery.redirectUrl!, { waitUntil: "domcontentloaded" });
      await page.locator('ul.coins button[value="ETH"]').click();
      await expect.poll(() => posted.length, { timeout: 15_000 }).toBeGreaterThan(0);
      expect(posted[0]).toBe(303);
      expect((await paymentOf(session.id)).inputCurrency).toBe("ETH");
    } finally {
      await context.close();
    }
  }, 120_000);
});
