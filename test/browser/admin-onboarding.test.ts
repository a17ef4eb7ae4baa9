// Onboarding in the merchant admin, in real Chromium through the development login:
// a wrong device key is refused with the gateway's reason, the right key and Secret Key
// connect the shop, and afterwards only the key's last four characters are ever shown.
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { notificationUrl } from "../../app/shops/onboarding.server";
import { browserForFile, saveScreenshot } from "../support/browser";
import { paymentColumns } from "../support/payment-rows";
import { stackForFile } from "../support/stack";
import { DESKTOP, openAdmin, reloadInteractive } from "./support/admin";
import { saveDocScreenshot } from "./support/screenshots";

// startStack connects the sandbox for its own shop; this test onboards a fresh one.
const SHOP = "fresh-onboarding.myshopify.com";
const WRONG_KEY = "0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a";

const stack = stackForFile({ env: { DEV_ADMIN_LOGIN: "true" } });
const browser = browserForFile();
let page: Page;

beforeAll(async () => {
  page = await browser().newPage({ viewport: DESKTOP });
});

async function connectWith(deviceKey: string, secretKeyHex: string) {
  await page.getByLabel("Gateway", { exact: true }).selectOption("sandbox");
  await page.getByLabel("Device API key").fill(deviceKey);
  await page.getByLabel("Secret Key").fill(secretKeyHex);
  await page.getByRole("button", { name: "Connect", exact: true }).click();
}

describe("onboarding in the admin", () => {
  it("sends a shop with no device to the connection page, refuses a wrong key, then connects with the right one", async () => {
    const { deviceKey, secretKeyHex } = stack().sandbox.demo;
    await openAdmin(page, stack(), "/app", SHOP);
    await page.waitForURL(/\/app\/onboarding/);
    await page.getByRole("heading", { name: "Gateway connection" }).waitFor();

    const shop = await stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: SHOP } });
    const expectedUrl = notificationUrl(stack().app.url, shop);
    expect(await page.locator("#notification-url").textContent()).toBe(expectedUrl);
    expect(expectedUrl).not.toContain(SHOP);
    expect(await page.getByText("Generate Secret Key").count()).toBeGreaterThan(0);
    await saveDocScreenshot(page, "admin-onboarding");

    await connectWith(WRONG_KEY, secretKeyHex);
    await page.getByText("The gateway refused this device key").first().waitFor();
    await saveScreenshot(page, "admin-onboarding-wrong-key");
    const refused = await stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: SHOP } });
    expect(refused.sandboxDeviceKeyEnc).toBeNull();
    // The form keeps what was typed so the merchant can correct it.
    expect(await page.getByLabel("Device API key").inputValue()).toBe(WRONG_KEY);

    await connectWith(deviceKey, secretKeyHex);
    await page.getByText("The gateway sandbox device is connected.").first().waitFor();
    await saveScreenshot(page, "admin-onboarding-connected");

    const stored = await stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: SHOP } });
    expect(stored.sandboxDeviceKeyEnc).not.toBeNull();
    expect(stored.sandboxDeviceKeyEnc).not.toContain(deviceKey);
    expect(stored.sandboxSecretKeyEnc).not.toContain(secretKeyHex);
    // Stored encrypted, never shown again: only the last four characters.
    expect(await page.getByLabel("Device API key").inputValue()).toBe("");
    expect(await page.getByLabel("Secret Key").inputValue()).toBe("");
    await page.getByText(`Device key ••••••••${deviceKey.slice(-4)}`).waitFor();

    await reloadInteractive(page);
    const html = await page.content();
    expect(html).not.toContain(deviceKey);
    expect(html).not.toContain(secretKeyHex);
    expect(html).toContain(deviceKey.slice(-4));

    // The home page tells live and test payments apart: only the sandbox is connected, and with
    // test mode off Shopify is told the shop is not ready, so it offers no test payments either.
    await openAdmin(page, stack(), "/app", SHOP);
    await page.getByText("Not ready for live payments").waitFor();
    await page.getByText("Test payments need test mode").waitFor();
  }, 120_000);

  it("creates a dedicated device and shows its key once, without storing it", async () => {
    await openAdmin(page, stack(), "/app/onboarding", SHOP);
    const before = await stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: SHOP } });
    await page.getByLabel("New device name").fill("Online shop");
    await page.getByRole("button", { name: "Create device" }).click();
    await page.getByText("Device “Online shop” created on the gateway sandbox").waitFor();
    // Made with the sandbox device's key, it is a sandbox device: the connection form is set to match.
    expect(await page.getByLabel("Gateway", { exact: true }).inputValue()).toBe("sandbox");
    const newKey = (await page.locator("#new-device-key").textContent()) ?? "";
    expect(newKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(newKey).not.toBe(stack().sandbox.demo.deviceKey);
    // The gateway knows the new device; the app keeps nothing of it until the merchant connects it.
    const settings = (await stack().sandboxControl(`/sandbox/devices/${newKey}/settings`, undefined, "GET")) as { name: string };
    expect(settings.name).toBe("Online shop");
    const after = await stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: SHOP } });
    expect(after.sandboxDeviceKeyEnc).toBe(before.sandboxDeviceKeyEnc);
    await reloadInteractive(page);
    expect(await page.content()).not.toContain(newKey);
  }, 60_000);

  it("saves how shoppers pay, the coins offered on the app's page, the gateway language, test mode and reading orders before Shopify is told", async () => {
    await openAdmin(page, stack(), "/app/settings", SHOP);
    await page.getByText("Shoppers pay on this app's own payment page (QR code and address)").click();
    await page.getByRole("heading", { name: "Shopify test orders (gateway sandbox)" }).waitFor();
    expect(await page.getByRole("heading", { name: "Real checkouts (live gateway)" }).count()).toBe(0);
    await page.getByText("Ripple XRP · XRP (XRP)").click();
    await page.getByText("Bitcoin BTC · BTC (BTC)").click();
    await page.getByLabel("Language of the gateway's payment page").selectOption("ES");
    await page.getByText("Test mode: accept only Shopify test orders, paid on the gateway sandbox").click();
    await page.getByText("Confirm every payment with the gateway before Shopify is told").click();
    await saveScreenshot(page, "admin-settings");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Settings saved.").waitFor();

    const shop = await stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: SHOP } });
    expect(shop).toMatchObject({ checkoutMode: "app_page", gatewayLanguage: "ES", testMode: true, readOrderOnWebhook: true });
    // Only the sandbox has a device: the coins ticked are the sandbox's.
    expect(JSON.parse(shop.sandboxOfferedCurrencies)).toEqual(["XRP", "BTC"]);
    expect(shop.liveOfferedCurrencies).toBe("[]");
    // The sandbox device is connected and test mode is on: Shopify may offer the method.
    expect(shop.paymentsAppReady).toBe(true);

    await reloadInteractive(page);
    expect(await page.getByLabel("Ripple XRP · XRP (XRP)").isChecked()).toBe(true);
    expect(await page.getByLabel("Ethereum ETH · ETH (ETH)").isChecked()).toBe(false);
  }, 60_000);

  it("shows the home page once a device is connected, and removes credentials only after confirmation", async () => {
    await openAdmin(page, stack(), "/app", SHOP);
    await page.getByRole("heading", { name: "Crypto checkout", exact: true }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/app");
    // Test mode is on (saved above) and the sandbox is connected.
    await page.getByText("Ready for test payments").waitFor();

    // A test payment the shopper has not finished: the confirmation says what removing does to it.
    const shop = await stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: SHOP } });
    await stack().services.db.payment.create({ data: paymentColumns(shop.id) });
    await openAdmin(page, stack(), "/app/onboarding", SHOP);
    await page.getByRole("button", { name: "Remove the sandbox credentials" }).click();
    await page.getByText("Remove the sandbox device's credentials?").waitFor();
    await page.getByText("1 payment is still in progress on it: the app keeps the credentials, sealed, only to read those payments' orders").waitFor();
    expect((await stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: SHOP } })).sandboxDeviceKeyEnc).not.toBeNull();
    await page.getByRole("button", { name: "Yes, remove them" }).click();
    await page.getByText("The sandbox device's credentials were removed.").waitFor();
    const removed = await stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: SHOP } });
    expect(removed.sandboxDeviceKeyEnc).toBeNull();
    // Kept, out of use, for the payment in progress, and the page says so.
    expect(removed.sandboxRetiredDeviceKeyEnc).toBe(shop.sandboxDeviceKeyEnc);
    await page.getByText("Credentials removed or replaced while payments were in progress on them are kept, out of use, to finish those payments").waitFor();

    // Test mode without a gateway account: the sandbox signs the shop up and points its notifications here.
    await page.getByRole("button", { name: "Connect the gateway sandbox" }).click();
    await page.getByText("Test mode is ready").waitFor();
    const connected = await stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: SHOP } });
    expect(connected.sandboxDeviceKeyEnc).not.toBeNull();

    // A payment on that device, then the sandbox connected again in place of it with the payment
    // still in progress: the merchant is told it will be finished with the previous device,
    // whose credentials are kept for it.
    await stack().services.db.payment.create({ data: paymentColumns(shop.id, { createdAt: stack().services.clock.now() }) });
    await page.getByRole("button", { name: "Reconnect the gateway sandbox" }).click();
    await page.getByText("Payments in progress on the previous device will still be finished with it").first().waitFor();
    const reconnected = await stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: SHOP } });
    expect(reconnected.sandboxRetiredDeviceKeyEnc).toBe(connected.sandboxDeviceKeyEnc);
  }, 60_000);

  it("remembers the development login's shop in a cookie for links without ?shop=", async () => {
    const first = await fetch(`${stack().app.url}/app/health?shop=cookie-shop.myshopify.com`);
    expect(first.status).toBe(200);
    const cookie = first.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^cryptopay_dev_shop=cookie-shop\.myshopify\.com;/);
    expect(cookie).toContain("HttpOnly");
    const next = await fetch(`${stack().app.url}/app/health`, { headers: { cookie: cookie.split(";")[0]! } });
    const html = (await next.text()).replace(/<!-- -->/g, "");
    expect(html).toContain("Development login · cookie-shop.myshopify.com");
  });

  it("refuses a shop that is not a *.myshopify.com domain", async () => {
    const response = await fetch(`${stack().app.url}/app?shop=${encodeURIComponent("evil.example.com")}`);
    expect(response.status).toBe(400);
  });
});
