// A keyboard or screen-reader shopper on the app's payment page, on the amount's Copy button
// (they just copied it into their wallet): when their payment arrives, the section with the QR
// code, amount, address and Copy buttons goes away. Focus moves to the status's heading rather
// than being lost to the document, where a screen reader starts again from the top (WCAG 2.4.3),
// as the page already sees to after a coin pick.
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { pageTexts } from "../../app/payment-page/texts";
import { browserForFile } from "../support/browser";
import { stackForFile } from "../support/stack";
import { PHONE, waitForHydration } from "./support/admin";

const stack = stackForFile();
const browser = browserForFile();
const en = pageTexts("en");

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const active = document.activeElement;
    return active === null || active === document.body ? "body" : active.id || active.outerHTML.slice(0, 80);
  });
}

describe("focus on the payment page when the payment arrives", () => {
  it("moves to the status's heading when the section the shopper was on goes away, not to the document", async () => {
    const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "en", amount: "25.00", currency: "EUR" });
    const chosen = await fetch(delivery.redirectUrl!, { method: "POST", body: new URLSearchParams({ symbol: "ETH" }), redirect: "manual" });
    expect(chosen.status).toBe(303);
    const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
    const page = await browser().newPage({ viewport: PHONE });
    try {
      await page.goto(delivery.redirectUrl!, { waitUntil: "load" });
      await waitForHydration(page);
      await page.getByRole("button", { name: `${en.copy}: ${en.exactAmount}` }).focus();
      expect(await focused(page)).not.toBe("body");

      await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "pay", amount: "exact" });
      await expect.poll(() => page.locator("#payment-status").textContent(), { timeout: 30_000 }).toBe(en.statuses.confirming);
      expect(await page.locator("button.copy").count()).toBe(0);
      await expect.poll(() => focused(page), { message: "focus was lost to the document" }).toBe("status-heading");
    } finally {
      await page.close();
    }
  }, 120_000);
});
