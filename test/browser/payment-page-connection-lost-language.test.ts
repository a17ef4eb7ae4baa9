// A shopper whose checkout speaks Spanish (customer.locale "es") on a browser set to English: when
// a request of the payment page does not get through, the "connection lost" card speaks the page's
// language (the payment's texts are already on the page), not the browser's, so the page does not
// switch languages mid-payment.
import { beforeAll, expect, it } from "vitest";
import { pageTexts } from "../../app/payment-page/texts";
import { browserForFile } from "../support/browser";
import { stackForFile } from "../support/stack";
import { PHONE, waitForHydration } from "./support/admin";

const stack = stackForFile();
const browser = browserForFile();
const en = pageTexts("en");
const es = pageTexts("es");

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

it("a coin pick whose request is lost says so in the page's language (Spanish), not in the browser's (English)", async () => {
  const { delivery } = await stack().standin.state.startPayment({ test: true, locale: "es", amount: "25.00", currency: "EUR" });
  const context = await browser().newContext({ viewport: PHONE, locale: "en-US" });
  try {
    const page = await context.newPage();
    await page.goto(delivery.redirectUrl!, { waitUntil: "load" });
    await waitForHydration(page);
    // The page speaks Spanish, the payment's language.
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
