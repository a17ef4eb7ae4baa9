// A shop's gateway credentials sealed under an encryption key the app no longer holds (a key
// dropped from CREDENTIALS_ENCRYPTION_KEYS before `credentials:rotate` re-sealed everything).
// The admin pages still open and say what is wrong and how to fix it, the shopper's pages
// still answer from what is stored, a new payment session is refused with a reason and stores
// nothing, gateway notifications are refused as unverifiable, Shopify is told the method is not
// ready, and connecting the device again (or putting the key back) puts everything right.
import { afterAll, beforeAll, expect, it } from "vitest";
import { signWebhook } from "../../app/gateway/webhook-signature";
import { checkPaymentNow } from "../../app/payments/check-payment";
import { connectSandbox, syncReadinessOfInstalledShops } from "../../app/shops/onboarding.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { startStack, waitFor, type Stack } from "../support/stack";
import { refusalsCounted } from "../support/refusals";

let stack: Stack;
const logLines: string[] = [];

beforeAll(async () => {
  stack = await startStack({ env: { DEV_ADMIN_LOGIN: "true" }, logLines });
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

const db = () => stack.services.db;
const shopRow = () => db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });

/** The sealed values name a key id the app does not have, as after the key was dropped. */
async function sealUnderLostKey() {
  const shop = await shopRow();
  const underLostKey = (sealed: string) => sealed.split(":").map((part, i) => (i === 1 ? "lost" : part)).join(":");
  await db().shop.update({
    where: { id: shop.id },
    data: { sandboxDeviceKeyEnc: underLostKey(shop.sandboxDeviceKeyEnc!), sandboxSecretKeyEnc: underLostKey(shop.sandboxSecretKeyEnc!) },
  });
}

async function adminPage(path: string): Promise<{ status: number; html: string }> {
  const response = await fetch(`${stack.app.url}${path}?shop=${stack.shopDomain}`);
  return { status: response.status, html: (await response.text()).replace(/<!-- -->/g, "") };
}

const UNREADABLE = "Gateway sandbox (test mode): the stored credentials cannot be read";

it("credentials no configured key opens: the admin says so on every page, the shopper's pages answer, a new session is refused with a reason and stores nothing", async () => {
  const { session, delivery } = await stack.standin.state.startPayment({ test: true });
  expect(delivery.status, delivery.body).toBe(200);
  const started = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });

  await sealUnderLostKey();

  for (const path of ["/app", "/app/settings", "/app/health", "/app/onboarding"]) {
    const page = await adminPage(path);
    expect(page.status, path).toBe(200);
    expect(page.html, path).toContain(UNREADABLE);
  }
  // The home page does not call the shop ready for the test payments it cannot take.
  const home = await adminPage("/app");
  expect(home.html).not.toContain("Test payments");
  expect(home.html).toContain("sandbox credentials cannot be read");
  expect((await adminPage("/app/onboarding")).html).toContain("Cannot be read");

  // Saving coins for that gateway, or making a device with its key, says why it cannot be done.
  const form = new URLSearchParams({ checkoutMode: "app_page", liveFixedCurrency: "", sandboxFixedCurrency: "", gatewayLanguage: "EN", testMode: "false" });
  form.append("sandboxOfferedCurrencies", "BTC");
  const saved = await fetch(`${stack.app.url}/app/settings?shop=${stack.shopDomain}`, { method: "POST", body: form });
  expect(saved.status).toBe(422);
  expect((await saved.text()).replace(/<!-- -->/g, "")).toContain("Nothing was saved: the stored credentials of the gateway sandbox cannot be read");
  const device = await fetch(`${stack.app.url}/app/onboarding?shop=${stack.shopDomain}`, { method: "POST", body: new URLSearchParams({ intent: "create_device", env: "sandbox", name: "Shop" }) });
  expect(device.status).toBe(422);
  expect(await device.text()).toContain("cannot be read with the app&#x27;s encryption keys");

  // The shopper's payment page and return link answer from what is stored.
  const page = await fetch(stack.services.links.paymentPageUrl(started));
  expect(page.status).toBe(200);
  // Nothing can be read or verified: a shopper the gateway sent back to wait waits, never sent to pay again.
  const back = await fetch(stack.services.links.returnUrl(started, "standby"), { redirect: "manual" });
  expect(back.status).toBe(200);
  expect(await back.text()).toContain('http-equiv="refresh"');

  // "Check now" on the payment's admin page explains instead of failing.
  const check = await checkPaymentNow(stack.services, started.shopId, started.id);
  expect(check).toMatchObject({ ok: false, message: expect.stringContaining("cannot be read") });

  // A new session: refused with a reason Shopify retries (503), and no payment recorded.
  const before = await db().payment.count();
  const refused = await stack.standin.state.startPayment({ test: true });
  expect(refused.delivery.status).toBe(503);
  expect(JSON.parse(refused.delivery.body)).toMatchObject({ error: "gateway_credentials_unreadable" });
  expect(await db().payment.count()).toBe(before);
  expect(logLines.some((line) => line.includes("stored gateway credentials cannot be decrypted"))).toBe(true);

  // Connecting the device again puts it right.
  const reconnected = await connectSandbox(stack.services, stack.shopDomain);
  expect(reconnected.ok).toBe(true);
  for (const path of ["/app", "/app/settings", "/app/health", "/app/onboarding"]) {
    const after = await adminPage(path);
    expect(after.status, path).toBe(200);
    expect(after.html, path).not.toContain(UNREADABLE);
  }
  // Readable again (test mode is off, and no live device: Shopify takes test payments once test mode is on).
  expect((await adminPage("/app")).html).toContain("Test payments need test mode");
  const retried = await stack.standin.state.redeliverPayment(refused.session.id);
  expect(retried.delivery.status, retried.delivery.body).toBe(200);
});

it("while the credentials cannot be read, Shopify is told the method is not ready and the gateway's notifications are refused as unverifiable; with the key back, it is ready again", async () => {
  // Test mode: the shop takes payments with its sandbox credentials, and Shopify knows it.
  await db().shop.update({ where: { shopDomain: stack.shopDomain }, data: { testMode: true } });
  await syncReadinessOfInstalledShops(stack.services);
  expect(stack.standin.state.configuration()).toMatchObject({ ready: true });
  const shop = await shopRow();
  const secretHex = stack.services.cipher.decrypt(shop.sandboxSecretKeyEnc!, credentialContext(shop.id, "sandbox", "secret-key"));
  const notify = async () => {
    const body = JSON.stringify({ identifier: crypto.randomUUID(), status: { code: "PE", description: "Pending" } });
    const nonce = String(Math.floor(Date.now() / 1000));
    const response = await fetch(`${stack.app.url}/gateway/webhooks/${shop.webhookToken}`, {
      method: "POST",
      body,
      headers: { "content-type": "application/json", "x-nonce": nonce, "x-signature": signWebhook({ secretHex, nonce, rawBody: body }) },
    });
    return { status: response.status, body: (await response.json()) as unknown };
  };
  const sealed = { sandboxDeviceKeyEnc: shop.sandboxDeviceKeyEnc, sandboxSecretKeyEnc: shop.sandboxSecretKeyEnc };

  await sealUnderLostKey();
  // A payment session meets them: refused, and the workers tell Shopify at once, so checkout
  // no longer offers a method whose sessions would all be refused.
  expect((await stack.standin.state.startPayment({ test: true })).delivery.status).toBe(503);
  await waitFor(async () => stack.standin.state.configuration()?.ready === false, "Shopify told the method is not ready");
  expect((await shopRow()).paymentsAppReady).toBe(false);
  expect(await syncReadinessOfInstalledShops(stack.services)).toBe(0);

  // A genuine notification cannot be told from a forgery: refused with the reason, nothing
  // stored, an error logged, and counted on the health page.
  const webhooksBefore = await db().gatewayWebhook.count();
  expect(await notify()).toEqual({ status: 503, body: { error: "credentials_unreadable" } });
  expect(await db().gatewayWebhook.count()).toBe(webhooksBefore);
  expect(await refusalsCounted(db(), { shopId: shop.id, reason: "credentials_unreadable" })).toBe(1);
  expect(logLines.some((line) => line.includes("Gateway webhook not verified: the shop's stored gateway credentials cannot be decrypted"))).toBe(true);
  expect((await adminPage("/app/health")).html).toContain("The stored Secret Key cannot be read with the app&#x27;s encryption keys");

  // The key is put back (nothing stored changes): the next pass makes the method ready again.
  await db().shop.update({ where: { id: shop.id }, data: sealed });
  expect(await syncReadinessOfInstalledShops(stack.services)).toBe(1);
  expect(stack.standin.state.configuration()).toMatchObject({ ready: true });
  expect((await shopRow()).paymentsAppReady).toBe(true);
  expect((await notify()).status).toBe(200);
});
