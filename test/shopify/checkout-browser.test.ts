// The local checkout experience in a real browser, on a phone-sized screen: choose an
// amount, pay on the app's page, land on Shopify's order page paid, then ask a refund.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser } from "playwright-core";
import { startShopifyStandin, type ShopifyStandin } from "../../dev/shopify-standin/server";
import { startTinyApp, type TinyApp } from "./tiny-app";

let standin: ShopifyStandin;
let app: TinyApp;
let browser: Browser;

beforeAll(async () => {
  app = await startTinyApp();
  standin = await startShopifyStandin({ appUrl: app.origin });
  app.connect({ endpoint: standin.graphqlEndpoint(), shopDomain: standin.shopDomain, accessToken: standin.accessToken });
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
});

afterAll(async () => {
  await browser?.close();
  await standin?.close();
  await app?.close();
});

describe("checkout in a browser", () => {
  it("goes from checkout to the app's page and back to a paid order, then starts a refund", async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(`${standin.origin}/checkout`);

    // Phone-friendly: nothing wider than the screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);

    await page.fill('input[name="amount"]', "25.00");
    await page.selectOption('select[name="currency"]', "GBP");
    await page.click('button[type="submit"]');
    await page.waitForURL(`${app.origin}/pay/**`);
    const sessionId = new URL(page.url()).pathname.split("/").pop()!;
    expect(standin.state.session(sessionId)?.type).toBe("payment");

    await page.click("text=I have paid");
    await page.waitForURL(`${standin.origin}/orders/${sessionId}`);
    await expect.poll(() => page.textContent("main")).toContain("Thank you! Your order is confirmed.");
    expect(await page.textContent("main")).toContain("25.00 GBP");

    await page.fill('input[name="amount"]', "5");
    // The refund form posts and comes back to the same URL, so wait for the content instead.
    await page.click('button:has-text("Refund")');
    await expect.poll(() => page.textContent("main")).toContain("refund 5.00 GBP");
    expect(standin.state.refundSessions()).toEqual([expect.objectContaining({ paymentId: sessionId, state: { code: "OPEN" } })]);
    expect(standin.state.invalidOperations()).toEqual([]);
  });

  it("loads the stand-in's checkout with no failed request and no console error (the browser asks it for no /favicon.ico)", async () => {
    const page = await browser.newPage();
    const failed: string[] = [];
    page.on("response", (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });
    // A failed icon request shows only as a console error.
    page.on("console", (message) => {
      if (message.type() === "error") failed.push(message.text());
    });
    try {
      await page.goto(`${standin.origin}/checkout`, { waitUntil: "load" });
      // Its icon is given in the page (a browser that once failed to get /favicon.ico may not ask again, so the page says it).
      expect(await page.evaluate(() => document.querySelector('link[rel~="icon"]')?.getAttribute("href"))).toBe("data:,");
      expect(failed).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
