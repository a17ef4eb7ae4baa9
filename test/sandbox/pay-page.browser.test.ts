// The hosted payment page in real Chromium: variant B (pick a currency on the
// page), pay exactly, confirm, land on url_ok; the webhooks that went out on
// the way verify with the app's own signature check.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { verifyWebhookSignature } from "../../app/gateway/webhook-signature.js";
import { launchBrowser, saveScreenshot } from "../support/browser.js";
import { client, createOrder, expectedSignature, info, startReceiver, startTestSandbox, type TestSandbox, type WebhookReceiver } from "./helpers.js";

let t: TestSandbox;
let browser: Browser;
let shop: Server;
let shopOrigin: string;
let receiver: WebhookReceiver;

beforeAll(async () => {
  t = await startTestSandbox();
  receiver = await startReceiver();
  await client(t.sandbox).control("POST", `/devices/${t.sandbox.demo.deviceKey}/settings`, { notification_url: receiver.url });
  shop = createServer((req, res) => {
    const text = req.url?.startsWith("/ok") ? "Thank you for your order" : "Payment not completed";
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(`<!doctype html><title>Shop</title><h1>${text}</h1>`);
  });
  await new Promise<void>((resolve) => shop.listen(0, "127.0.0.1", resolve));
  shopOrigin = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => {
    shop.close(() => resolve());
    shop.closeAllConnections();
  });
  await receiver.close();
  await t.stop();
});

describe("hosted payment page", () => {
  it("variant B: choose a currency, pay exactly, confirm, and land on url_ok", async () => {
    const order = await createOrder(t.sandbox, {
      expected_output_amount: "42.00",
      fiat: "EUR",
      language: "en",
      notes: "Blue mug",
      merchant_urlok: `${shopOrigin}/ok?order=1`,
      merchant_urlko: `${shopOrigin}/ko?order=1`,
    });
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await page.goto(order.web_url);
      await expect.poll(() => page.getByRole("heading", { name: "Choose a cryptocurrency" }).isVisible()).toBe(true);
      expect(await page.getByRole("button", { name: "USD Coin USDC (ETH)", exact: true }).isEnabled()).toBe(true);
      await saveScreenshot(page, "sandbox-pay-page-1-choose-currency");

      await page.getByRole("button", { name: "Bitcoin BTC (BTC)", exact: true }).click();
      await page.getByRole("img", { name: "QR code of the payment request" }).waitFor();
      const after = await info(t.sandbox, order.identifier);
      expect(after.status).toBe("PE");
      expect(await page.locator("#address").textContent()).toBe(after.address);
      expect(await page.locator("#amount").textContent()).toBe(`${after.crypto_amount} BTC`);
      expect(await page.locator("#countdown").textContent()).toMatch(/^\d+:\d{2}$/);
      expect(await page.locator(".qr svg").count()).toBe(1);
      await saveScreenshot(page, "sandbox-pay-page-2-payment-data");

      await page.getByRole("button", { name: "Pay exactly" }).click();
      await expect.poll(() => page.getByRole("status").textContent()).toContain("waiting for confirmation");
      expect((await info(t.sandbox, order.identifier)).status).toBe("AC");
      await saveScreenshot(page, "sandbox-pay-page-3-awaiting-confirmation");

      await page.getByRole("button", { name: "Confirm" }).click();
      await page.waitForURL(`${shopOrigin}/ok?order=1`, { timeout: 15_000 });
      expect(await page.getByRole("heading").textContent()).toBe("Thank you for your order");
      await saveScreenshot(page, "sandbox-pay-page-4-back-in-shop");
      expect((await info(t.sandbox, order.identifier)).status).toBe("CO");
    } finally {
      await page.close();
    }

    await vi.waitFor(() => expect(receiver.received.length).toBeGreaterThanOrEqual(3), { timeout: 10_000, interval: 20 });
    const statuses = receiver.received.map((r) => JSON.parse(r.rawBody).status);
    expect(statuses).toEqual(["PE", "AC", "CO"]);
    for (const hook of receiver.received) {
      const verdict = verifyWebhookSignature({
        secretHex: t.sandbox.demo.secretKeyHex,
        nonce: String(hook.headers["x-nonce"]),
        signature: String(hook.headers["x-signature"]),
        rawBody: hook.rawBody,
        now: new Date(),
        maxAgeSeconds: 120,
      });
      expect(verdict.ok).toBe(true);
      expect(hook.headers["x-signature"]).toBe(expectedSignature(t.sandbox.demo.secretKeyHex, String(hook.headers["x-nonce"]), hook.rawBody));
    }
    const tampered = receiver.received[0]!;
    expect(
      verifyWebhookSignature({
        secretHex: t.sandbox.demo.secretKeyHex,
        nonce: String(tampered.headers["x-nonce"]),
        signature: String(tampered.headers["x-signature"]),
        rawBody: tampered.rawBody.replace('"PE"', '"CO"'),
        now: new Date(),
        maxAgeSeconds: 120,
      }).ok,
    ).toBe(false);
  });

  it("variant A in Spanish for XRP: the destination tag is shown prominently, and expiry sends the shopper to url_ko", async () => {
    const order = await createOrder(t.sandbox, {
      expected_output_amount: "15.00",
      input_currency: "XRP",
      fiat: "EUR",
      language: "ES",
      merchant_urlok: `${shopOrigin}/ok?order=2`,
      merchant_urlko: `${shopOrigin}/ko?order=2`,
    });
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await page.goto(order.web_url);
      const memo = page.getByRole("alert").filter({ hasText: "Etiqueta de destino" });
      await memo.waitFor();
      expect(await page.locator("#tag-memo").textContent()).toBe(order.tag_memo);
      expect(await memo.textContent()).toContain("perderás tus fondos");
      expect(await page.locator("html").getAttribute("lang")).toBe("es");
      await saveScreenshot(page, "sandbox-pay-page-5-xrp-tag-es");
      await page.getByRole("button", { name: "Dejar caducar ahora" }).click();
      await page.waitForURL(`${shopOrigin}/ko?order=2`, { timeout: 15_000 });
      expect((await info(t.sandbox, order.identifier)).status).toBe("EX");
    } finally {
      await page.close();
    }
  });

  it("offers only the currencies whose limits fit the amount", async () => {
    const order = await createOrder(t.sandbox, {
      expected_output_amount: "5.00",
      fiat: "EUR",
      language: "en",
      merchant_urlok: `${shopOrigin}/ok?order=4`,
      merchant_urlko: `${shopOrigin}/ko?order=4`,
    });
    const page = await browser.newPage();
    try {
      await page.goto(order.web_url);
      const usdc = page.getByRole("button", { name: /^USD Coin USDC \(ETH\) — Not available for this amount \(Minimum 10\.00 EUR\)$/ });
      expect(await usdc.isDisabled()).toBe(true);
      expect(await page.getByRole("button", { name: "Bitcoin BTC (BTC)", exact: true }).isEnabled()).toBe(true);
    } finally {
      await page.close();
    }
  });

  it("notices a status change made elsewhere and redirects (live status polling)", async () => {
    const order = await createOrder(t.sandbox, {
      expected_output_amount: "15.00",
      input_currency: "ETH",
      fiat: "EUR",
      language: "en",
      merchant_urlok: `${shopOrigin}/ok?order=3`,
      merchant_urlko: `${shopOrigin}/ko?order=3`,
    });
    const page = await browser.newPage();
    try {
      await page.goto(order.web_url);
      await page.getByRole("img", { name: "QR code of the payment request" }).waitFor();
      await client(t.sandbox).control("POST", `/orders/${order.identifier}/actions`, { action: "complete_by_merchant" });
      await page.waitForURL(`${shopOrigin}/ok?order=3`, { timeout: 15_000 });
    } finally {
      await page.close();
    }
  });

  it("its payment page and dashboard load with no failed request and no console error (the browser asks for no /favicon.ico)", async () => {
    const order = await createOrder(t.sandbox, { expected_output_amount: "15.00", fiat: "EUR", language: "en", merchant_urlok: `${shopOrigin}/ok`, merchant_urlko: `${shopOrigin}/ko` });
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("response", (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
    });
    try {
      for (const url of [order.web_url, `${t.sandbox.origin}/sandbox/dashboard`]) {
        await page.goto(url, { waitUntil: "load" });
        // Its icon is given in the page (a browser that once failed to get /favicon.ico may not ask again, so the page says it).
        expect(await page.evaluate(() => document.querySelector('link[rel~="icon"]')?.getAttribute("href"))).toBe("data:,");
      }
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
