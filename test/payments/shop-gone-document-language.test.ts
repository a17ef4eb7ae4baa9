// The payment page's 410 after the merchant uninstalled the app is written in the payment's
// language and declares it: <html lang> (what a screen reader picks its voice by) is the
// payment's language, whatever the browser asks for.
import { beforeAll, expect, it } from "vitest";
import { pageTexts } from "../../app/payment-page/texts";
import { handleAppUninstalled } from "../../app/shops/shopify-webhooks.server";
import { coinPickedOnAppPage, stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });
const es = pageTexts("es");
let pageLink = "";

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
  // A coin picked: the page of a payment with no order yet sends the shopper back to the checkout instead.
  ({ pageUrl: pageLink } = await coinPickedOnAppPage(stack(), { locale: "es", amount: "25.00", currency: "EUR" }));
  // The merchant uninstalls: Shopify revokes the app's tokens, then sends app/uninstalled.
  stack().standin.state.uninstallApp();
  await handleAppUninstalled(stack().services, stack().shopDomain);
}, 60_000);

it("the shop-gone answer of the payment page declares the language it is written in, whatever the browser asks for", async () => {
  const answer = await fetch(pageLink, { redirect: "manual", headers: { "accept-language": "en-US,en;q=0.9" } });
  expect(answer.status).toBe(410);
  const html = await answer.text();
  // The page speaks the payment's language: Spanish heading and title.
  expect(html).toContain(es.shopGone.heading);
  expect(html).toContain(`<title>${es.shopGone.title}</title>`);
  // ...so the document must say so, not the browser's English.
  expect(/<html lang="([^"]+)"/.exec(html)?.[1]).toBe("es");
}, 60_000);
