// The payment page's expiry countdown in real Chromium on a phone-sized screen: it shows the
// order's real time left when the page's scripts reach the phone seconds after its HTML (a slow
// phone network: the server's clock is taken from when the HTML arrived, not from when the
// scripts ran), and it follows the server's clock again on every status poll, so a phone
// whose own clock is set while the page is open does not keep a wrong countdown.
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { browserForFile } from "../support/browser";
import { coinPickedOnAppPage, stackForFile } from "../support/stack";
import { PHONE, waitForHydration } from "./support/admin";

const stack = stackForFile();
const browser = browserForFile();

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

/** "m:ss" as seconds. */
function seconds(shown: string): number {
  const match = /^(\d+):(\d{2})$/.exec(shown.trim());
  if (!match) throw new Error(`not a countdown: ${shown}`);
  return Number(match[1]) * 60 + Number(match[2]);
}

/** A payment with its ETH order: its page's link and the order's expiry. */
async function pickedPayment(): Promise<{ url: string; expiresAtMs: number }> {
  const { pageUrl, payment } = await coinPickedOnAppPage(stack(), { locale: "en", amount: "25.00", currency: "EUR" });
  expect(payment.expiresAt).not.toBeNull();
  return { url: pageUrl, expiresAtMs: payment.expiresAt!.getTime() };
}

/** How far the countdown shown is from the order's real time left, in seconds (positive: it shows more time than is left). */
async function drift(page: Page, expiresAtMs: number): Promise<number> {
  const shown = seconds((await page.locator("#countdown").textContent()) ?? "");
  return shown - Math.floor((expiresAtMs - Date.now()) / 1000);
}

describe("the expiry countdown", () => {
  it("shows the order's real time left when the page's scripts arrive seconds after its HTML", async () => {
    const { url, expiresAtMs } = await pickedPayment();
    const page = await browser().newPage({ viewport: PHONE });
    try {
      // The page's first script reaches the phone 6 seconds after its HTML.
      let delayed = false;
      await page.route("**/*", async (route) => {
        if (route.request().resourceType() === "script" && !delayed) {
          delayed = true;
          await new Promise((resolve) => setTimeout(resolve, 6_000));
        }
        await route.continue();
      });
      await page.goto(url, { waitUntil: "load" });
      await waitForHydration(page);
      await page.locator("#amount").waitFor();
      // Let the countdown tick a few times (before the first status poll could correct it).
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      // A page that took the server's clock from when its scripts ran would be 6 s off. Up to 3 s
      // are allowed: on a loaded machine the page's one-second tick and this read can lag (a
      // run of the whole suite saw 2).
      expect(Math.abs(await drift(page, expiresAtMs))).toBeLessThanOrEqual(3);
    } finally {
      await page.close();
    }
  }, 120_000);

  it("follows the server's clock again on the next status poll when the phone's clock is set back while the page is open", async () => {
    const { url, expiresAtMs } = await pickedPayment();
    const page = await browser().newPage({ viewport: PHONE });
    try {
      // The phone's clock, as the page reads it, can be set from the test.
      await page.addInitScript(() => {
        const realNow = Date.now.bind(Date);
        let skewMs = 0;
        Date.now = () => realNow() + skewMs;
        Object.defineProperty(window, "__setClockSkew", { value: (ms: number) => (skewMs = ms) });
      });
      await page.goto(url, { waitUntil: "load" });
      await waitForHydration(page);
      await page.locator("#amount").waitFor();
      await new Promise((resolve) => setTimeout(resolve, 1_500));

      // The phone's clock goes back 10 minutes (set by its network, say).
      await page.evaluate(() => (window as unknown as { __setClockSkew(ms: number): void }).__setClockSkew(-10 * 60_000));
      // A status poll comes every 4 seconds: after the next one the countdown is right again.
      await expect.poll(async () => Math.abs(await drift(page, expiresAtMs)), { timeout: 10_000, interval: 500 }).toBeLessThanOrEqual(1);
    } finally {
      await page.close();
    }
  }, 120_000);
});
