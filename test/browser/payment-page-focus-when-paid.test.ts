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

/** A payment of the stack's shop with ETH picked: the page shows the amount and its Copy buttons. */
async function paymentPaying(): Promise<{ pageUrl: string; gatewayOrderId: string }> {
  const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "en", amount: "25.00", currency: "EUR" });
  const chosen = await fetch(delivery.redirectUrl!, { method: "POST", body: new URLSearchParams({ symbol: "ETH" }), redirect: "manual" });
  expect(chosen.status).toBe(303);
  const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  if (payment.gatewayOrderId === null) throw new Error("the pick made no gateway order");
  return { pageUrl: delivery.redirectUrl!, gatewayOrderId: payment.gatewayOrderId };
}

/** The gateway takes the exact amount; the page shows the payment confirming, without the Copy buttons. */
async function payAndSeeConfirming(page: Page, gatewayOrderId: string): Promise<void> {
  await stack().sandboxControl(`/sandbox/orders/${gatewayOrderId}/actions`, { action: "pay", amount: "exact" });
  await expect.poll(() => page.locator("#payment-status").textContent(), { timeout: 30_000 }).toBe(en.statuses.confirming);
  expect(await page.locator("button.copy").count()).toBe(0);
}

const amountCopyButton = { name: `${en.copy}: ${en.exactAmount}` };

describe("focus on the payment page when the payment arrives", () => {
  it("moves to the status's heading when the section the shopper was on goes away, not to the document", async () => {
    const { pageUrl, gatewayOrderId } = await paymentPaying();
    const page = await browser().newPage({ viewport: PHONE });
    try {
      await page.goto(pageUrl, { waitUntil: "load" });
      await waitForHydration(page);
      await page.getByRole("button", amountCopyButton).focus();
      expect(await focused(page)).not.toBe("body");

      await payAndSeeConfirming(page, gatewayOrderId);
      await expect.poll(() => focused(page), { message: "focus was lost to the document", timeout: 5_000 }).toBe("status-heading");
    } finally {
      await page.close();
    }
  }, 120_000);

  it("does so too when the shopper reached the Copy button before the page's scripts ran", async () => {
    const { pageUrl, gatewayOrderId } = await paymentPaying();
    const page = await browser().newPage({ viewport: PHONE });
    // Everything but the document waits until the shopper is on the button: the scripts run after.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route("**/*", async (route) => {
      if (!route.request().isNavigationRequest()) await held;
      await route.continue();
    });
    try {
      await page.goto(pageUrl, { waitUntil: "commit" });
      await page.getByRole("button", amountCopyButton).focus();
      expect(await page.evaluate(() => "__remixRouter" in window)).toBe(false);
      release();
      await waitForHydration(page);
      expect(await focused(page), "hydration kept the button the shopper is on").not.toBe("body");

      await payAndSeeConfirming(page, gatewayOrderId);
      await expect.poll(() => focused(page), { message: "focus was lost to the document", timeout: 5_000 }).toBe("status-heading");
    } finally {
      release();
      await page.close();
    }
  }, 120_000);
});
