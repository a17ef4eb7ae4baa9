// The settings page of a shop with both gateway environments connected (the gateway sandbox
// and a stand-in for the live gateway, which names its coins differently), in real Chromium:
// each environment's coins are chosen from its own list and saved apart, the form shows what
// was saved after every save, a stored coin the environment does not list is pointed out,
// a coin it does not list is refused in the form with nothing saved, and a fixed coin left
// unchosen is refused on the coin fields themselves.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserForFile, saveScreenshot } from "../support/browser";
import { startStackWithLiveGateway, type LiveGatewayStandin } from "../support/live-gateway";
import type { Stack } from "../support/stack";
import { DESKTOP, openAdmin, reloadInteractive, saveSettingsForm } from "./support/admin";

const LIVE_COIN = "Coin for real checkouts (live gateway)";
const SANDBOX_COIN = "Coin for Shopify test orders (gateway sandbox)";

let live: LiveGatewayStandin;
let stack: Stack;
const browser = browserForFile();
let page: Page;

beforeAll(async () => {
  ({ stack, live } = await startStackWithLiveGateway({ env: { DEV_ADMIN_LOGIN: "true" } }));
  page = await browser().newPage({ viewport: DESKTOP });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await live?.close();
});

const shopRow = () => stack.services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });

/** Saves the form and waits until the page shows the answer and the settings read again (an earlier save's banner may still be up). */
async function save(expected = "Settings saved.") {
  await saveSettingsForm(page);
  // An error about a field is said in the banner and on the field: the first is enough to wait for.
  await page.getByText(expected).first().waitFor();
}

/** What describes a field to a screen reader: the texts its aria-describedby names. */
async function descriptionOf(label: string): Promise<string> {
  const ids = ((await page.getByLabel(label).getAttribute("aria-describedby")) ?? "").split(/\s+/).filter(Boolean);
  const texts = await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).textContent()));
  return texts.join(" ");
}

const optionValues = (label: string) => page.getByLabel(label).locator("option").evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));

describe("coin settings of both environments", () => {
  it("chooses each environment's fixed coin from its own list, and shows what was saved after every save", async () => {
    await openAdmin(page, stack, "/app/settings");
    await page.getByText("Shoppers pay with one fixed coin (on the gateway's payment page)").click();
    expect(await optionValues(LIVE_COIN)).toEqual(["", "BTC", "ETH", "USDC_POLYGON_NXTB", "TRX_USDC_6NU3"]);
    expect(await optionValues(SANDBOX_COIN)).toEqual(expect.arrayContaining(["", "USDC_POLYGON", "USDT_TRC20"]));
    expect(await optionValues(SANDBOX_COIN)).not.toContain("USDC_POLYGON_NXTB");
    await page.getByLabel(LIVE_COIN).selectOption("USDC_POLYGON_NXTB");
    await page.getByLabel(SANDBOX_COIN).selectOption("USDC_POLYGON");
    await saveScreenshot(page, "admin-settings-coins-per-environment");
    await save();
    expect(await shopRow()).toMatchObject({ checkoutMode: "fixed_coin", liveFixedCurrency: "USDC_POLYGON_NXTB", sandboxFixedCurrency: "USDC_POLYGON" });

    // Test mode changes which orders are taken, not which coin each environment's orders use.
    await page.getByText("Test mode: accept only Shopify test orders, paid on the gateway sandbox").click();
    await save();
    expect(await page.getByLabel(LIVE_COIN).inputValue()).toBe("USDC_POLYGON_NXTB");
    expect(await page.getByLabel(SANDBOX_COIN).inputValue()).toBe("USDC_POLYGON");
    expect(await shopRow()).toMatchObject({ testMode: true, liveFixedCurrency: "USDC_POLYGON_NXTB", sandboxFixedCurrency: "USDC_POLYGON" });

    // Another way of paying clears the fixed coins; the form starts again from what is stored.
    await page.getByText("Shoppers choose the coin on the gateway's payment page").click();
    await save();
    expect(await shopRow()).toMatchObject({ checkoutMode: "gateway_choice", liveFixedCurrency: null, sandboxFixedCurrency: null });
    await page.getByText("Shoppers pay with one fixed coin (on the gateway's payment page)").click();
    expect(await page.getByLabel(LIVE_COIN).inputValue()).toBe("");
    expect(await page.getByLabel(SANDBOX_COIN).inputValue()).toBe("");
  }, 90_000);

  it("points out a stored coin the environment does not list, and refuses one in the form with nothing saved", async () => {
    // What a single coin setting chosen on the sandbox's list left for live orders.
    await stack.services.db.shop.update({ where: { shopDomain: stack.shopDomain }, data: { checkoutMode: "fixed_coin", liveFixedCurrency: "USDC_POLYGON", sandboxFixedCurrency: null } });
    await openAdmin(page, stack, "/app/settings");
    expect(await page.getByLabel(LIVE_COIN).inputValue()).toBe("USDC_POLYGON");
    await page.getByText("USDC_POLYGON is not offered by the live gateway, which refuses orders for it. Choose another coin.").waitFor();
    await saveScreenshot(page, "admin-settings-coin-not-listed");

    const before = await shopRow();
    await page.getByLabel(LIVE_COIN).selectOption("BTC");
    // A coin the page does not offer, as a form sent from a stale or altered page would name it.
    await page.locator('input[name="liveFixedCurrency"]').evaluate((input) => ((input as HTMLInputElement).value = "USDT_TRC20"));
    await save("Nothing was saved: the live gateway does not offer USDT_TRC20. Choose among the coins it lists.");
    expect(await shopRow()).toEqual(before);

    await page.getByLabel(LIVE_COIN).selectOption("ETH");
    await save();
    expect(await shopRow()).toMatchObject({ liveFixedCurrency: "ETH", sandboxFixedCurrency: null });
    await reloadInteractive(page);
    expect(await page.getByLabel(LIVE_COIN).inputValue()).toBe("ETH");
  }, 90_000);

  it("offers on the app's page each environment's own ticked coins", async () => {
    await openAdmin(page, stack, "/app/settings");
    await page.getByText("Shoppers pay on this app's own payment page (QR code and address)").click();
    await page.getByRole("heading", { name: "Real checkouts (live gateway)" }).waitFor();
    await page.getByRole("heading", { name: "Shopify test orders (gateway sandbox)" }).waitFor();
    await page.getByText("USD Coin USDC · USDC_POLYGON_NXTB (MATIC_POLYGON)").click();
    await page.getByText("Ripple XRP · XRP (XRP)").click();
    await saveScreenshot(page, "admin-settings-offered-per-environment");
    await save();
    const shop = await shopRow();
    expect(JSON.parse(shop.liveOfferedCurrencies)).toEqual(["USDC_POLYGON_NXTB"]);
    expect(JSON.parse(shop.sandboxOfferedCurrencies)).toEqual(["XRP"]);
    await reloadInteractive(page);
    expect(await page.getByLabel("USD Coin USDC · USDC_POLYGON_NXTB (MATIC_POLYGON)").isChecked()).toBe(true);
    expect(await page.getByLabel("Ripple XRP · XRP (XRP)").isChecked()).toBe(true);
  }, 60_000);

  it("refuses a fixed coin left unchosen on both coin fields, which are marked invalid and described by the error, with nothing saved", async () => {
    await stack.services.db.shop.update({ where: { shopDomain: stack.shopDomain }, data: { checkoutMode: "gateway_choice", liveFixedCurrency: null, sandboxFixedCurrency: null } });
    await openAdmin(page, stack, "/app/settings");
    await page.getByText("Shoppers pay with one fixed coin (on the gateway's payment page)").click();
    const before = await shopRow();
    const error = "Choose the coin shoppers pay with, for real checkouts, Shopify test orders or both.";
    await save(error);
    for (const label of [LIVE_COIN, SANDBOX_COIN]) {
      expect(await page.getByLabel(label).getAttribute("aria-invalid"), label).toBe("true");
      expect(await descriptionOf(label), label).toContain(error);
    }
    expect(await shopRow()).toEqual(before);
  }, 60_000);
});
