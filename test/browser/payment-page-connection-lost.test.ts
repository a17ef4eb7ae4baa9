// A shopper on a flaky phone connection, on the app's own payment page in Spanish: a request of
// the page that does not get through (a coin pick, or the reload of the page's data after its
// live status moved) does not turn the page into an English "cannot be shown" page that stops
// following the payment. The page says in the shopper's language that the connection was lost,
// tries again by itself, and carries on as it was once the connection is back. On a browser set
// to English, the card still speaks the page's Spanish: the page does not switch languages.
import { beforeAll, describe, expect, it } from "vitest";
import { pageTexts } from "../../app/payment-page/texts";
import { browserForFile } from "../support/browser";
import { coinPickedOnAppPage, stackForFile } from "../support/stack";
import { PHONE, waitForHydration } from "./support/admin";

const stack = stackForFile();
const browser = browserForFile();
const en = pageTexts("en");
const es = pageTexts("es");

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

/** A Spanish shopper's payment with ETH picked on the app's page, open on a phone and waiting for the crypto. */
async function waitingOnPhone() {
  const { pageUrl, payment } = await coinPickedOnAppPage(stack(), { locale: "es", amount: "25.00", currency: "EUR" });
  const context = await browser().newContext({ viewport: PHONE, locale: "es-ES" });
  try {
    const page = await context.newPage();
    await page.goto(pageUrl, { waitUntil: "load" });
    await waitForHydration(page);
    await expect.poll(() => page.locator("#payment-status").textContent()).toBe(es.statuses.waiting);
    return { payment, context, page };
  } catch (error) {
    await context.close();
    throw error;
  }
}

describe("the payment page on a flaky connection", () => {
  it("a coin pick whose request is lost says so in Spanish and tries again; back online, the page is back and the pick goes through", async () => {
    const { delivery } = await stack().standin.state.startPayment({ test: true, locale: "es", amount: "25.00", currency: "EUR" });
    const context = await browser().newContext({ viewport: PHONE, locale: "es-ES" });
    try {
      const page = await context.newPage();
      await page.goto(delivery.redirectUrl!, { waitUntil: "load" });
      await waitForHydration(page);
      // The connection drops for the page's requests.
      await page.route("**/*.data*", (route) => route.abort("internetdisconnected"));
      await page.locator('ul.coins button[value="ETH"]').click();
      await page.getByRole("heading", { name: es.connectionLost.heading }).waitFor();
      const text = await page.locator("body").innerText();
      expect(text, "the page became the English error page").not.toContain(en.pageFailed.heading);
      expect(text).toContain(es.connectionLost.body);
      expect(await page.locator(".pp").getAttribute("lang")).toBe("es");
      // Back online: the page comes back by itself (within its 5 s retry), and the pick goes through.
      await page.unroute("**/*.data*");
      await page.locator('ul.coins button[value="ETH"]').waitFor({ timeout: 15_000 });
      await page.locator('ul.coins button[value="ETH"]').click();
      await expect.poll(() => page.locator("#address").count(), { timeout: 15_000 }).toBe(1);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("a reload of the page's data that fails after the payment moved on keeps the page, which then follows the payment to its end", async () => {
    const { payment, context, page } = await waitingOnPhone();
    try {
      // The phone loses the page's data requests for a moment, as the shopper's payment arrives.
      let dropped = 0;
      await page.route("**/*.data*", async (route) => {
        dropped++;
        await route.abort("internetdisconnected");
      });
      await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "pay", amount: "exact" });
      await expect.poll(() => dropped, { timeout: 30_000 }).toBeGreaterThan(0);
      await page.getByRole("heading", { name: es.connectionLost.heading }).waitFor();
      await page.unroute("**/*.data*");
      const text = await page.locator("body").innerText();
      expect(text, "the payment page became the English error page").not.toContain(en.pageFailed.heading);
      expect(text).toContain(es.connectionLost.heading);
      // Back online, the page goes on following the payment and shows it received.
      await expect.poll(() => page.locator("#payment-status").textContent(), { timeout: 30_000 }).toBe(es.statuses.confirming);
    } finally {
      await context.close();
    }
  }, 180_000);
  it("a payment that ends while the connection is lost, with Shopify not answering, leads to the return link's waiting page once the retry gets through, not to a blank page", async () => {
    const { payment, context, page } = await waitingOnPhone();
    try {
      // The page's data requests are lost as the payment arrives: the page shows its connection-lost card.
      await page.route("**/*.data*", (route) => route.abort("internetdisconnected"));
      const act = (body: Record<string, unknown>) => stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, body);
      await act({ action: "pay", amount: "exact" });
      await page.getByRole("heading", { name: es.connectionLost.heading }).waitFor({ timeout: 30_000 });
      // While the card shows, the payment completes; Shopify does not answer, so the shopper is yet to be sent on.
      stack().standin.state.setFault({ mode: "http_500", count: 1000 });
      await act({ action: "confirm" });
      await expect.poll(async () => (await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).state, { timeout: 30_000 }).toBe("paid");
      // Back online, the card's retry reads the page again, which leads to the return link's own page, in the payment's language.
      await page.unroute("**/*.data*");
      await page.waitForURL(/\/payments\/return\//, { timeout: 30_000 });
      await page.getByRole("heading", { name: es.waitingForShop.heading }).waitFor({ timeout: 15_000 });
      expect(await page.locator("html").getAttribute("lang")).toBe("es");
    } finally {
      stack().standin.state.clearFaults();
      await context.close();
    }
  }, 180_000);

  it("on a browser set to English, a lost coin pick says so in the page's language (Spanish), not the browser's", async () => {
    const { delivery } = await stack().standin.state.startPayment({ test: true, locale: "es", amount: "25.00", currency: "EUR" });
    const context = await browser().newContext({ viewport: PHONE, locale: "en-US" });
    try {
      const page = await context.newPage();
      await page.goto(delivery.redirectUrl!, { waitUntil: "load" });
      await waitForHydration(page);
      expect(await page.locator("h1").first().textContent()).toBe(es.pageTitle);
      await page.route("**/*.data*", (route) => route.abort("internetdisconnected"));
      await page.locator('ul.coins button[value="ETH"]').click();
      // The connection-lost card, in whichever language it comes.
      await page.locator("#error-heading").waitFor({ timeout: 15_000 });
      const heading = await page.locator("#error-heading").textContent();
      expect([en.connectionLost.heading, es.connectionLost.heading]).toContain(heading);
      expect(heading, "the page switched from Spanish to English mid-payment").toBe(es.connectionLost.heading);
      expect(await page.locator(".pp").getAttribute("lang")).toBe("es");
    } finally {
      await context.close();
    }
  }, 120_000);
});
