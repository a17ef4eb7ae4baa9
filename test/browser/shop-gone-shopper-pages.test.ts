// A shopper on the app's payment page, or back through a return link, after the merchant
// uninstalled the app: the shop's gateway credentials and Shopify token are gone, so no payment
// can reach its order any more. The page asks for no crypto, says so in the shopper's language
// and what to do about crypto already sent, as does the return link, instead of a page that
// waits for a confirmation that can never come. A page left open when the shop uninstalled
// turns into that answer by itself.
import { beforeAll, expect, it } from "vitest";
import { pageLanguage } from "../../app/payment-page/language";
import { pageTexts } from "../../app/payment-page/texts";
import { handleAppUninstalled } from "../../app/shops/shopify-webhooks.server";
import type { Payment } from "../../generated/prisma/sqlite/client";
import { browserForFile } from "../support/browser";
import { paymentThrough, stackForFile } from "../support/stack";
import { PHONE, waitForHydration } from "./support/admin";

const stack = stackForFile({ workers: false });
const browser = browserForFile();
const es = pageTexts("es");

let pageLink = "";
let paid: Payment;

beforeAll(async () => {
  // A Spanish shopper on the app's page who picked a coin, and one who paid on the gateway's page (money seen, not confirmed yet).
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
  const { delivery } = await stack().standin.state.startPayment({ test: true, locale: "es", amount: "25.00", currency: "EUR" });
  const chosen = await fetch(delivery.redirectUrl!, { method: "POST", body: new URLSearchParams({ symbol: "ETH" }), redirect: "manual" });
  expect(chosen.status).toBe(303);
  pageLink = delivery.redirectUrl!;
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "gateway_choice" } });
  paid = (await paymentThrough(stack(), [{ action: "choose_currency", currency: "ETH" }, { action: "pay", amount: "exact" }])).payment;
}, 60_000);

it("a page left open turns into 'this shop no longer takes crypto payments here' once the shop uninstalls; its link and the return link say the same, asking for nothing", async () => {
  const page = await browser().newPage({ viewport: PHONE });
  try {
    await page.goto(pageLink, { waitUntil: "load" });
    await waitForHydration(page);
    await expect.poll(() => page.locator("#address").count()).toBe(1);

    // The merchant uninstalls: Shopify revokes the app's tokens, then sends app/uninstalled.
    stack().standin.state.uninstallApp();
    await handleAppUninstalled(stack().services, stack().shopDomain);
    // The page follows the payment every few seconds: it shows the shop's answer by itself.
    await page.getByRole("heading", { name: es.shopGone.heading }).waitFor({ timeout: 15_000 });
    expect(await page.getByText(es.shopGone.body).count()).toBe(1);
    expect(await page.locator("#address, #amount, .qr").count()).toBe(0);
  } finally {
    await page.close();
  }

  // The link opened again, and the status it polls.
  const again = await fetch(pageLink, { redirect: "manual" });
  expect(again.status).toBe(410);
  const html = await again.text();
  expect(html).toContain(es.shopGone.heading);
  expect(html).not.toContain('id="address"');
  const status = new URL(pageLink);
  status.pathname += "/status";
  expect((await fetch(status)).status).toBe(410);

  // A shopper who paid, back through the return link after waiting five minutes already.
  const url = new URL(stack().services.links.returnUrl(paid, "ok"));
  url.searchParams.set("waiting", String(Math.floor(Date.now() / 1000) - 300));
  const back = await fetch(url, { redirect: "manual" });
  expect(back.status).toBe(410);
  const returned = await back.text();
  const language = pageLanguage(paid.merchantLocale);
  expect(returned).toContain(`<html lang="${language}">`);
  const texts = pageTexts(language);
  expect(returned).toContain(texts.shopGone.heading);
  expect(returned).not.toContain(texts.waitingLong.body);
  expect(returned).not.toContain("http-equiv=\"refresh\"");
}, 60_000);
