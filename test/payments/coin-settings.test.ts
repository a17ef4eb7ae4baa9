// The coin settings of each gateway environment, through the settings form and real
// checkouts: the live gateway (a stand-in that names its coins as the live one does) and the
// gateway sandbox list different symbols, so a coin chosen for one never reaches an order of
// the other, a coin an environment does not list is refused when saving, and the app's own
// payment page offers the coins of the payment's environment.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { coinsFor } from "../../app/payment-page/payment-page.server";
import { connectGateway } from "../../app/shops/onboarding.server";
import { getAdminPage, postAdminForm, postForms } from "../support/admin-pages";
import { startLiveGateway, type LiveGatewayStandin } from "../support/live-gateway";
import { startStack, type Stack } from "../support/stack";

let live: LiveGatewayStandin;
let stack: Stack;

beforeAll(async () => {
  live = await startLiveGateway();
  stack = await startStack({ env: { GATEWAY_BASE_URL: live.baseUrl, DEV_ADMIN_LOGIN: "true" } });
  await connectLive();
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await live?.close();
});

const db = () => stack.services.db;
const shopRow = () => db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });

/** Connects (again) a live device: a new key, so the app asks the live gateway for its coins afresh. */
async function connectLive() {
  const connected = await connectGateway(stack.services, stack.shopDomain, { env: "live", deviceKey: randomUUID(), secretKeyHex: "5e".repeat(32) });
  if (!connected.ok) throw new Error(`could not connect the live stand-in: ${connected.message}`);
}

interface CoinFields {
  checkoutMode?: string;
  liveFixedCurrency?: string;
  sandboxFixedCurrency?: string;
  liveOfferedCurrencies?: string[];
  sandboxOfferedCurrencies?: string[];
  gatewayLanguage?: string;
}

/** Posts the settings form as the page does (test mode off), through the development login. */
async function saveSettings(fields: CoinFields): Promise<{ status: number; html: string }> {
  const form = new URLSearchParams({
    checkoutMode: fields.checkoutMode ?? "fixed_coin",
    liveFixedCurrency: fields.liveFixedCurrency ?? "",
    sandboxFixedCurrency: fields.sandboxFixedCurrency ?? "",
    gatewayLanguage: fields.gatewayLanguage ?? "EN",
    testMode: "false",
  });
  for (const symbol of fields.liveOfferedCurrencies ?? []) form.append("liveOfferedCurrencies", symbol);
  for (const symbol of fields.sandboxOfferedCurrencies ?? []) form.append("sandboxOfferedCurrencies", symbol);
  const response = await fetch(`${stack.app.url}/app/settings?shop=${stack.shopDomain}`, { method: "POST", body: form });
  return { status: response.status, html: (await response.text()).replace(/<!-- -->/g, "") };
}

async function saved(fields: CoinFields) {
  const { status, html } = await saveSettings(fields);
  expect(status, html.slice(0, 500)).toBe(200);
  expect(html).toContain("Settings saved.");
}

/** A real checkout (the live gateway): the order request it sent there. */
async function liveOrder(): Promise<Record<string, unknown>> {
  const before = live.orders.length;
  const { delivery } = await stack.standin.state.startPayment({ test: false });
  expect(delivery.status, delivery.body).toBe(200);
  expect(live.orders).toHaveLength(before + 1);
  return live.orders.at(-1)!;
}

/** A Shopify test order (the gateway sandbox): the coin its order was created with, null when the shopper picks it. */
async function sandboxOrderCoin(): Promise<string | null> {
  const before = live.orders.length;
  const { session, delivery } = await stack.standin.state.startPayment({ test: true });
  expect(delivery.status, delivery.body).toBe(200);
  expect(live.orders).toHaveLength(before);
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  expect(payment.gatewayEnv).toBe("sandbox");
  return payment.inputCurrency;
}

describe("coin settings per gateway environment", () => {
  it("creates each environment's orders with its own fixed coin: saving one environment's coin leaves the other's orders as they were", async () => {
    await saved({ liveFixedCurrency: "USDC_POLYGON_NXTB", sandboxFixedCurrency: "USDC_POLYGON" });
    expect(await shopRow()).toMatchObject({ checkoutMode: "fixed_coin", liveFixedCurrency: "USDC_POLYGON_NXTB", sandboxFixedCurrency: "USDC_POLYGON" });
    expect((await liveOrder()).input_currency).toBe("USDC_POLYGON_NXTB");
    expect(await sandboxOrderCoin()).toBe("USDC_POLYGON");

    // A sandbox coin is saved: live orders keep the live coin.
    await saved({ liveFixedCurrency: "USDC_POLYGON_NXTB", sandboxFixedCurrency: "USDT_TRC20" });
    expect((await liveOrder()).input_currency).toBe("USDC_POLYGON_NXTB");
    expect(await sandboxOrderCoin()).toBe("USDT_TRC20");

    // And the reverse.
    await saved({ liveFixedCurrency: "TRX_USDC_6NU3", sandboxFixedCurrency: "USDT_TRC20" });
    expect((await liveOrder()).input_currency).toBe("TRX_USDC_6NU3");
    expect(await sandboxOrderCoin()).toBe("USDT_TRC20");
  });

  it("creates a live order without input_currency when only the sandbox has a fixed coin: the shopper picks it on the gateway's page", async () => {
    await saved({ sandboxFixedCurrency: "USDC_POLYGON" });
    const order = await liveOrder();
    expect(order).not.toHaveProperty("input_currency");
    expect(order.merchant_urlok).toEqual(expect.any(String));
    expect(await sandboxOrderCoin()).toBe("USDC_POLYGON");

    await saved({ liveFixedCurrency: "BTC" });
    expect((await liveOrder()).input_currency).toBe("BTC");
    expect(await sandboxOrderCoin()).toBeNull();
  });

  it("refuses a coin the environment does not list with a 422 (a form missing its coin with a 400) and saves nothing", async () => {
    await saved({ liveFixedCurrency: "USDC_POLYGON_NXTB", sandboxFixedCurrency: "USDC_POLYGON" });
    const before = await shopRow();
    const refusals: [CoinFields, number, string][] = [
      [{ liveFixedCurrency: "USDC_POLYGON", sandboxFixedCurrency: "USDC_POLYGON" }, 422, "Nothing was saved: the live gateway does not offer USDC_POLYGON."],
      [{ liveFixedCurrency: "USDC_POLYGON_NXTB", sandboxFixedCurrency: "USDC_POLYGON_NXTB" }, 422, "Nothing was saved: the gateway sandbox does not offer USDC_POLYGON_NXTB."],
      [{ checkoutMode: "app_page", liveOfferedCurrencies: ["BTC", "XRP"], gatewayLanguage: "ES" }, 422, "Nothing was saved: the live gateway does not offer XRP."],
      [{ checkoutMode: "app_page", sandboxOfferedCurrencies: ["TRX_USDC_6NU3", "NOPE"] }, 422, "Nothing was saved: the gateway sandbox does not offer TRX_USDC_6NU3, NOPE."],
      [{ checkoutMode: "fixed_coin" }, 400, "Choose the coin shoppers pay with, for real checkouts, Shopify test orders or both."],
    ];
    for (const [fields, expected, message] of refusals) {
      const { status, html } = await saveSettings(fields);
      expect({ status, refused: html.includes(message) }).toEqual({ status: expected, refused: true });
    }
    expect(await shopRow()).toEqual(before);
    expect((await liveOrder()).input_currency).toBe("USDC_POLYGON_NXTB");
  });

  it("saves nothing when the live gateway cannot be reached to check a new coin, and asks it nothing when no coin changes", async () => {
    await saved({ liveFixedCurrency: "USDC_POLYGON_NXTB", sandboxFixedCurrency: "USDC_POLYGON" });
    await connectLive();
    live.down = true;
    try {
      const before = await shopRow();
      // The app could not do its part: a 503, as for any service it depends on being down.
      const { status, html } = await saveSettings({ liveFixedCurrency: "ETH", sandboxFixedCurrency: "USDC_POLYGON" });
      expect(status).toBe(503);
      expect(html).toContain("Nothing was saved: the live gateway cannot be reached to check its coins.");
      expect(await shopRow()).toEqual(before);

      // The coins stay as they are: the language is saved without asking the gateway.
      await saved({ liveFixedCurrency: "USDC_POLYGON_NXTB", sandboxFixedCurrency: "USDC_POLYGON", gatewayLanguage: "ES" });
      expect(await shopRow()).toMatchObject({ gatewayLanguage: "ES", liveFixedCurrency: "USDC_POLYGON_NXTB", sandboxFixedCurrency: "USDC_POLYGON" });
    } finally {
      live.down = false;
    }
  }, 60_000);

  it("offers on the app's page the coins of the payment's environment (none chosen: all of them)", async () => {
    await saved({ checkoutMode: "app_page", liveOfferedCurrencies: ["BTC", "USDC_POLYGON_NXTB"], sandboxOfferedCurrencies: ["XRP", "LTC"] });
    const offered = async (test: boolean) => {
      const { session, delivery } = await stack.standin.state.startPayment({ test, amount: "25.00", currency: "EUR" });
      expect(delivery.status, delivery.body).toBe(200);
      expect(delivery.redirectUrl).toContain(`${stack.app.url}/pay/`);
      const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id }, include: { shop: true, transactions: { select: { amount: true } } } });
      const html = await (await fetch(delivery.redirectUrl!)).text();
      const symbols = (await coinsFor(stack.services, payment))?.map((c) => c.symbol);
      for (const symbol of symbols ?? []) expect(html).toContain(`value="${symbol}"`);
      return { symbols, pageUrl: delivery.redirectUrl!, paymentId: payment.id };
    };
    const real = await offered(false);
    expect(real.symbols).toEqual(["BTC", "USDC_POLYGON_NXTB"]);
    expect((await offered(true)).symbols).toEqual(["LTC", "XRP"]);

    // A coin of the other environment cannot be picked; one of the payment's own is ordered with it, on its gateway.
    const refused = await fetch(real.pageUrl, { method: "POST", body: new URLSearchParams({ symbol: "XRP" }), redirect: "manual" });
    expect(refused.status).toBe(400);
    const before = live.orders.length;
    const chosen = await fetch(real.pageUrl, { method: "POST", body: new URLSearchParams({ symbol: "USDC_POLYGON_NXTB" }), redirect: "manual" });
    expect(chosen.status).toBe(303);
    expect(live.orders.slice(before).map((o) => o.input_currency)).toEqual(["USDC_POLYGON_NXTB"]);
    expect(await db().payment.findUniqueOrThrow({ where: { id: real.paymentId } })).toMatchObject({ inputCurrency: "USDC_POLYGON_NXTB", gatewayEnv: "live" });

    // An empty list offers every coin of the environment (within the amount's limits).
    await saved({ checkoutMode: "app_page", sandboxOfferedCurrencies: ["XRP", "LTC"] });
    expect((await offered(false)).symbols).toEqual(["BTC", "ETH", "USDC_POLYGON_NXTB", "TRX_USDC_6NU3"]);
  });
});

describe("a save from a page loaded before another change", () => {
  it("is refused, saves nothing and leaves the other change as it was; the page then shows the settings as they are", async () => {
    const settingsForm = async () => postForms((await getAdminPage(stack, "/app/settings")).html).find((form) => "version" in form)!;
    const stale = await settingsForm();
    const other = await settingsForm();
    // Another tab saves the gateway page's language first.
    const first = await postAdminForm(stack, "/app/settings", { ...other, gatewayLanguage: "ES" });
    expect(first.status).toBe(200);
    expect(first.text).toContain("Settings saved.");

    // The page loaded before it saves test mode, with the language it showed.
    const refused = await postAdminForm(stack, "/app/settings", { ...stale, testMode: "true" });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain("Nothing was saved: the settings were changed since this page was loaded");
    expect(await shopRow()).toMatchObject({ gatewayLanguage: "ES", testMode: false });

    // Filled in again on the page as it is now, the save goes through.
    const current = await settingsForm();
    expect(current.version).not.toBe(stale.version);
    expect(current.gatewayLanguage).toBe("ES");
    expect((await postAdminForm(stack, "/app/settings", { ...current, testMode: "true" })).status).toBe(200);
    expect(await shopRow()).toMatchObject({ gatewayLanguage: "ES", testMode: true });
    await postAdminForm(stack, "/app/settings", { ...(await settingsForm()), testMode: "false", gatewayLanguage: "EN" });
  });
});
