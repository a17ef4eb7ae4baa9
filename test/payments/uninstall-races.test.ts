// An uninstall handled while an admin request is on its way: the request neither makes the
// shop look installed again nor stores anything in it, so the shop/redact that follows the
// uninstall still deletes everything. Only an install Shopify proves (recordInstall, from the
// token exchange's afterAuth) makes the shop installed again.
import { beforeAll, expect, it } from "vitest";
import { connectGateway, connectSandbox, updateShopSettings } from "../../app/shops/onboarding.server";
import { recordInstall, SHOP_UNINSTALLED_MESSAGE } from "../../app/shops/shop-credentials.server";
import { handleAppUninstalled, redactShop, SHOP_REDACT_DELAY_MS } from "../../app/shops/shopify-webhooks.server";
import { paymentColumns } from "../support/payment-rows";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
beforeAll(() => stack().logger.info("uninstall races"));

const shopRow = (shopDomain: string) => stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain } });

/** What the row says of the install, and whether it holds sandbox credentials. */
async function held(shopDomain: string) {
  const shop = await shopRow(shopDomain);
  return { uninstalled: shop.uninstalledAt !== null, credentials: shop.sandboxDeviceKeyEnc !== null || shop.sandboxSecretKeyEnc !== null, ready: shop.paymentsAppReady };
}

/** A fetch that has the app/uninstalled webhook handled before its first request is answered. */
function uninstallingOnFirstRequest(shopDomain: string) {
  let uninstalledAt: Date | null = null;
  const fetchDuring: typeof fetch = async (input, init) => {
    if (!uninstalledAt) {
      uninstalledAt = new Date();
      await handleAppUninstalled(stack().services, shopDomain, uninstalledAt);
    }
    return fetch(input, init);
  };
  return { fetch: fetchDuring, uninstalledAt: () => uninstalledAt };
}

it("a device connected while its key check outlasts an uninstall is refused; the shop stays uninstalled and shop/redact deletes it", async () => {
  const { services, sandbox } = stack();
  const shopDomain = "leaving-connect.myshopify.com";
  expect((await connectSandbox(services, shopDomain)).ok).toBe(true);
  const shop = await shopRow(shopDomain);
  await services.db.payment.create({ data: paymentColumns(shop.id, { state: "paid", customerEmail: "shopper@example.com", customerName: "Shop Per" }) });

  const slow = uninstallingOnFirstRequest(shopDomain);
  const result = await connectGateway({ ...services, fetch: slow.fetch }, shopDomain, { env: "sandbox", deviceKey: sandbox.demo.deviceKey, secretKeyHex: sandbox.demo.secretKeyHex });
  expect(slow.uninstalledAt()).not.toBeNull();
  expect(result).toEqual({ ok: false, kind: "uninstalled", message: SHOP_UNINSTALLED_MESSAGE });
  expect(await held(shopDomain)).toEqual({ uninstalled: true, credentials: false, ready: false });

  // Shopify's shop/redact, 48 hours after that uninstall.
  expect(await redactShop(services, shopDomain, new Date(slow.uninstalledAt()!.getTime() + SHOP_REDACT_DELAY_MS))).toBe("carried_out");
  expect(await services.db.payment.count({ where: { shopId: shop.id } })).toBe(0);
});

it("the gateway sandbox connected while its sign-up outlasts an uninstall stores nothing", async () => {
  const { services } = stack();
  const shopDomain = "leaving-sandbox.myshopify.com";
  expect((await connectSandbox(services, shopDomain)).ok).toBe(true);

  // The row is read before the sign-up, installed; the uninstall lands between that read and the write.
  const slow = uninstallingOnFirstRequest(shopDomain);
  const result = await connectSandbox({ ...services, fetch: slow.fetch }, shopDomain);
  expect(slow.uninstalledAt()).not.toBeNull();
  expect(result).toEqual({ ok: false, kind: "uninstalled", message: SHOP_UNINSTALLED_MESSAGE });
  expect(await held(shopDomain)).toEqual({ uninstalled: true, credentials: false, ready: false });
});

it("a settings save for a shop uninstalled while the request was on its way is refused, and the shop stays uninstalled", async () => {
  const { services } = stack();
  const shopDomain = "leaving-settings.myshopify.com";
  expect((await connectSandbox(services, shopDomain)).ok).toBe(true);
  await handleAppUninstalled(services, shopDomain, new Date());

  const saved = await updateShopSettings(services, shopDomain, { checkoutMode: "gateway_choice", gatewayLanguage: "ES", testMode: true });
  expect(saved).toEqual({ ok: false, kind: "uninstalled", message: SHOP_UNINSTALLED_MESSAGE });
  const shop = await shopRow(shopDomain);
  expect({ uninstalled: shop.uninstalledAt !== null, gatewayLanguage: shop.gatewayLanguage }).toEqual({ uninstalled: true, gatewayLanguage: "AUTO" });
});

it("the admin answers 409 for a shop the app was uninstalled from, and leaves it uninstalled", async () => {
  const { services, app } = stack();
  const shopDomain = "leaving-admin.myshopify.com";
  expect((await connectSandbox(services, shopDomain)).ok).toBe(true);
  await handleAppUninstalled(services, shopDomain, new Date());

  for (const [method, path] of [
    ["GET", "/app/settings"],
    ["POST", "/app/onboarding"],
  ] as const) {
    const url = new URL(path, app.url);
    url.searchParams.set("shop", shopDomain);
    const response = await fetch(url, { method, redirect: "manual", ...(method === "POST" ? { body: new URLSearchParams({ intent: "connect_sandbox" }) } : {}) });
    expect({ path, status: response.status, text: await response.text() }).toEqual({ path, status: 409, text: expect.stringContaining("uninstalled") as unknown });
  }
  expect(await held(shopDomain)).toEqual({ uninstalled: true, credentials: false, ready: false });
});

it("after Shopify's reinstall (recordInstall) the merchant connects again", async () => {
  const { services } = stack();
  const shopDomain = "coming-back.myshopify.com";
  expect((await connectSandbox(services, shopDomain)).ok).toBe(true);
  await handleAppUninstalled(services, shopDomain, new Date());
  expect((await connectSandbox(services, shopDomain)).ok).toBe(false);

  await recordInstall(services.db, shopDomain, new Date());
  expect((await connectSandbox(services, shopDomain)).ok).toBe(true);
  expect(await held(shopDomain)).toMatchObject({ uninstalled: false, credentials: true });
});

it("with the development login, whose log-in page stands for Shopify's install, a shop uninstalled is installed again by logging in", async () => {
  const { services, app } = stack();
  const shopDomain = "dev-coming-back.myshopify.com";
  expect((await connectSandbox(services, shopDomain)).ok).toBe(true);
  await handleAppUninstalled(services, shopDomain, new Date());
  const open = (path: string) => fetch(new URL(`${path}?shop=${shopDomain}`, app.url), { redirect: "manual" });

  const refused = await open("/app");
  expect(refused.status).toBe(409);
  expect(await refused.text()).toContain(`log in again at /auth/login?shop=${shopDomain}`);
  // Opening the admin installs nothing; the log-in page does.
  expect(await held(shopDomain)).toMatchObject({ uninstalled: true });
  const login = await open("/auth/login");
  expect(login.status).toBe(302);
  expect(login.headers.get("location")).toBe(`/app?shop=${shopDomain}`);
  // Installed again, with no device (the uninstall deleted it): the connection page opens.
  expect((await open("/app/onboarding")).status).toBe(200);
  expect(await held(shopDomain)).toEqual({ uninstalled: false, credentials: false, ready: false });
});
