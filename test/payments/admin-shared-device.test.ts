// A merchant connects the same gateway sandbox device in two shops. The gateway sends the
// device's notifications to the one notification URL set on it (here the stack's shop's): the
// connection page of each shop says so, what it means for the shop's payments and how to give
// the shop a device of its own, without naming the other shop. And the gateway's own
// notifications of the other shop's payment, coming to the stack's shop's URL, settle that
// payment all the same.
import { beforeAll, expect, it } from "vitest";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import { connectGateway } from "../../app/shops/onboarding.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { handleAppUninstalled } from "../../app/shops/shopify-webhooks.server";
import { getAdminPage } from "../support/admin-pages";
import { sendPaymentSession, stackForFile, waitFor } from "../support/stack";

const OTHER_SHOP = "second-store.myshopify.com";
const WARNING = "Another shop uses this gateway sandbox device";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
// The stack checks its log for secrets when it closes: these pages alone may write no line.
beforeAll(() => stack().logger.info("admin shared device: started"));

const db = () => stack().services.db;
/** The connection page of the stack's shop, or of another shop. */
const connectionPage = (shopDomain = stack().shopDomain) => getAdminPage({ ...stack(), shopDomain }, "/app/onboarding");
/** The health page, where a merchant looks when notifications stop coming. */
const healthPage = (shopDomain = stack().shopDomain) => getAdminPage({ ...stack(), shopDomain }, "/app/health");
const HEALTH_NOTE = "The gateway sandbox device is connected in another shop too";

/** The other shop connects the very sandbox device the stack's shop uses, with its Secret Key. */
async function connectTheSameDeviceInTheOtherShop(): Promise<void> {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  const deviceKey = stack().services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"));
  const secretKeyHex = stack().services.cipher.decrypt(shop.sandboxSecretKeyEnc!, credentialContext(shop.id, "sandbox", "secret-key"));
  const connected = await connectGateway(stack().services, OTHER_SHOP, { env: "sandbox", deviceKey, secretKeyHex });
  if (!connected.ok) throw new Error(connected.message);
}

it("each shop's connection page warns that another shop uses its device, what that means and what to do, without naming the other shop", async () => {
  const alone = await connectionPage();
  expect(alone.status).toBe(200);
  expect(alone.text).not.toContain("Another shop uses this");
  expect((await healthPage()).text).not.toContain("connected in another shop too");

  await connectTheSameDeviceInTheOtherShop();

  for (const [shop, other] of [
    [stack().shopDomain, OTHER_SHOP],
    [OTHER_SHOP, stack().shopDomain],
  ] as const) {
    const page = await connectionPage(shop);
    expect(page.status).toBe(200);
    expect(page.text).toContain(WARNING);
    // What it means: one notification URL per device, payments settling later through the app's checks.
    expect(page.text).toContain("The gateway sends a device's notifications to the one notification URL set on it, so they reach only one of the two shops.");
    expect(page.text).toMatch(/payments still settle, but only through the app's regular checks with the gateway .* so later than a notification would settle them/);
    // The way out: a device of the shop's own.
    expect(page.text).toContain("reconnect the gateway sandbox below: it makes a device of this shop's own");
    // Not the live device, which is not shared.
    expect(page.text).not.toContain("Another shop uses this live device");
    // Nothing of the other shop, in the page or in the data it carries.
    expect(page.html).not.toContain(other);
    // The health page, beside the last notification received, says why it may be quiet.
    const health = await healthPage(shop);
    expect(health.status).toBe(200);
    expect(health.text).toContain(HEALTH_NOTE);
    expect(health.text).not.toContain("The live device is connected in another shop too");
    expect(health.html).not.toContain(other);
  }
}, 60_000);

it("the gateway's own notifications of the other shop's payment, sent to this shop's notification URL, settle that payment", async () => {
  const session = stack().standin.state.createPaymentSession({ test: true });
  const started = await sendPaymentSession(stack(), session.request, OTHER_SHOP);
  expect(started.status).toBe(200);
  await started.body?.cancel();
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id, shop: { shopDomain: OTHER_SHOP } } });
  const orderId = payment.gatewayOrderId!;
  for (const action of [{ action: "choose_currency", currency: "ETH" }, { action: "pay", amount: "exact" }, { action: "confirm" }]) {
    await stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, action);
  }
  // The device's notifications come to the stack's shop's URL, the one set on the device.
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  await waitFor(async () => (await db().gatewayWebhook.count({ where: { shopId: shop.id, orderId, status: "CO" } })) > 0, "the CO notification at the stack's shop");

  // Passed on to the other shop, then processed there as its own.
  await processWebhookInbox(stack().services, { worker: "t" });
  await processWebhookInbox(stack().services, { worker: "t" });

  const settled = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(settled).toMatchObject({ state: "paid", gatewayStatus: "CO" });
  expect(await db().gatewayWebhook.count({ where: { shop: { shopDomain: OTHER_SHOP }, orderId, status: "CO", processedAt: { not: null } } })).toBe(1);
}, 60_000);

it("once the other shop is uninstalled, the device is no longer said to be shared", async () => {
  expect((await connectionPage()).text).toContain(WARNING);
  await handleAppUninstalled(stack().services, OTHER_SHOP);
  expect((await connectionPage()).text).not.toContain("Another shop uses this");
  expect((await healthPage()).text).not.toContain(HEALTH_NOTE);
}, 60_000);
