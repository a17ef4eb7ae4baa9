// Shopify is told whether the payment method can be offered each time that changes. A
// readiness call that failed and is retried after a newer one was delivered sends the shop's
// readiness as it is then, never the older value it was stored with. A readiness call Shopify
// refused is made again at the next save, even when the readiness did not change, and by the
// readiness pass when no one saves. Shopify
// keeps the readiness per install and starts a new install not ready, so a reinstall whose
// uninstall was not carried out (its webhook delivered only after the reinstall, which the app
// ignores on purpose, or never) is told ready again, though the row said ready from before.
import { createHmac, randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { deliverDueMessages } from "../../app/payments/outbox";
import { credentialsVersion, removeGatewayCredentials, syncReadinessOfInstalledShops, updateShopSettings } from "../../app/shops/onboarding.server";
import { recordInstall } from "../../app/shops/shop-credentials.server";
import { getAdminPage } from "../support/admin-pages";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });

const settings = (testMode: boolean) => ({
  checkoutMode: "gateway_choice",
  gatewayLanguage: "EN",
  testMode,
  readOrderOnWebhook: false,
  liveOfferedCurrencies: [],
  sandboxOfferedCurrencies: [],
});

/** Shopify's app/uninstalled for the shop, triggered at `triggeredAt`, through the real route. */
async function uninstallWebhook(triggeredAt: Date): Promise<Response> {
  const { app, env, shopDomain } = stack();
  const body = JSON.stringify({ id: 1, domain: shopDomain });
  return fetch(`${app.url}/webhooks/app/uninstalled`, {
    method: "POST",
    body,
    headers: {
      "content-type": "application/json",
      "x-shopify-topic": "app/uninstalled",
      "x-shopify-shop-domain": shopDomain,
      "x-shopify-hmac-sha256": createHmac("sha256", env.SHOPIFY_API_SECRET).update(body).digest("base64"),
      "x-shopify-webhook-id": randomUUID(),
      "x-shopify-api-version": "2026-04",
      "x-shopify-triggered-at": triggeredAt.toISOString(),
    },
  });
}

/** Test mode on the connected sandbox, and Shopify told it is ready. */
async function toldReady() {
  const { services, shopDomain, standin } = stack();
  expect((await updateShopSettings(services, shopDomain, settings(true))).ok).toBe(true);
  await deliverDueMessages(services, { worker: "t" });
  expect(standin.state.configuration()?.ready).toBe(true);
  expect((await services.db.shop.findUniqueOrThrow({ where: { shopDomain } })).paymentsAppReady).toBe(true);
}

/** What the readiness calls made since `since` told Shopify. */
async function readinessSentSince(since: Date): Promise<boolean[]> {
  const { services, shopDomain } = stack();
  const sent = await services.db.outboxMessage.findMany({ where: { shopDomain, kind: "app.configure", createdAt: { gte: since } }, select: { payload: true } });
  return sent.map((message) => (JSON.parse(message.payload) as { ready: boolean }).ready);
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 5));

it("a readiness call retried after a newer one was delivered sends the shop's readiness as it is now", async () => {
  const { services, shopDomain, standin } = stack();
  const readiness = async () => (await services.db.shop.findUniqueOrThrow({ where: { shopDomain } })).paymentsAppReady;
  const before = await readiness();
  // Shopify fails the first change (it waits for a retry); the change back is delivered at once.
  standin.state.setFault({ mode: "http_500", count: 1 });
  expect((await updateShopSettings(services, shopDomain, settings(true))).ok).toBe(true);
  expect(await readiness()).toBe(!before);
  expect((await updateShopSettings(services, shopDomain, settings(false))).ok).toBe(true);
  expect(await readiness()).toBe(before);

  await services.db.outboxMessage.updateMany({ where: { kind: "app.configure", status: "pending" }, data: { nextAttemptAt: new Date() } });
  await deliverDueMessages(services, { worker: "t" });
  expect(await services.db.outboxMessage.count({ where: { kind: "app.configure", status: "pending" } })).toBe(0);
  expect(standin.state.configuration()?.ready).toBe(before);
});

it("after Shopify refused the last readiness call, the next save tells it again, though the readiness did not change", async () => {
  const { services, shopDomain, standin } = stack();
  const shop = await services.db.shop.findUniqueOrThrow({ where: { shopDomain } });
  expect((await updateShopSettings(services, shopDomain, settings(false))).ok).toBe(true);
  const calls = async () => services.db.outboxMessage.count({ where: { shopDomain, kind: "app.configure" } });
  const before = await calls();
  // Nothing changed and Shopify took the last call: nothing is sent.
  expect((await updateShopSettings(services, shopDomain, settings(false))).ok).toBe(true);
  expect(await calls()).toBe(before);

  // Shopify refused the last one (as it would with user errors), and its configuration was lost.
  const last = await services.db.outboxMessage.findFirstOrThrow({ where: { shopDomain, kind: "app.configure" }, orderBy: { createdAt: "desc" } });
  await services.db.outboxMessage.update({ where: { id: last.id }, data: { status: "failed", lastError: "Shopify refused the call" } });
  expect((await updateShopSettings(services, shopDomain, settings(false))).ok).toBe(true);
  expect(await calls()).toBe(before + 1);
  const sent = await services.db.outboxMessage.findFirstOrThrow({ where: { shopDomain, kind: "app.configure" }, orderBy: { createdAt: "desc" } });
  expect(sent.status).toBe("done");
  expect(standin.state.configuration()?.ready).toBe(shop.paymentsAppReady);
});

it("after Shopify refused the last readiness call, the readiness pass tells it again, with no save, and once told, not again", async () => {
  const { services, shopDomain, standin } = stack();
  expect((await updateShopSettings(services, shopDomain, settings(true))).ok).toBe(true);
  const shop = await services.db.shop.findUniqueOrThrow({ where: { shopDomain } });
  const calls = async () => services.db.outboxMessage.count({ where: { shopDomain, kind: "app.configure" } });
  const last = await services.db.outboxMessage.findFirstOrThrow({ where: { shopDomain, kind: "app.configure" }, orderBy: { createdAt: "desc" } });
  await services.db.outboxMessage.update({ where: { id: last.id }, data: { status: "failed", lastError: "Shopify refused the call" } });
  const before = await calls();

  expect(await syncReadinessOfInstalledShops(services)).toBe(1);
  expect(await calls()).toBe(before + 1);
  expect(standin.state.configuration()?.ready).toBe(shop.paymentsAppReady);
  // Taken this time: the next pass has nothing to tell, though a refused call stays on record.
  expect(await syncReadinessOfInstalledShops(services)).toBe(0);
  expect(await calls()).toBe(before + 1);
});

it("after a reinstall whose earlier uninstall was not carried out, the readiness pass tells Shopify the new install is ready, and the admin wakes it", async () => {
  const { services, shopDomain } = stack();
  await toldReady();

  // The merchant uninstalls (Shopify's app/uninstalled is delayed) and installs again: the
  // admin's token exchange runs afterAuth, which records the install.
  const uninstalledAt = new Date();
  await pause();
  const reinstalledAt = new Date();
  await recordInstall(services.db, shopDomain, reinstalledAt);
  // The late uninstall arrives and is ignored, as designed: the sandbox credentials stay.
  expect((await uninstallWebhook(uninstalledAt)).status).toBe(200);
  expect((await services.db.shop.findUniqueOrThrow({ where: { shopDomain } })).uninstalledAt).toBeNull();

  // The merchant opens the admin: the readiness pass is woken at once, not left to its next round.
  let wakes = 0;
  const unsubscribe = services.subscribe("readiness", () => wakes++);
  try {
    expect((await getAdminPage(stack(), "/app")).status).toBe(200);
  } finally {
    unsubscribe();
  }
  await syncReadinessOfInstalledShops(services);

  const sent = await readinessSentSince(reinstalledAt);
  expect({ sent, woken: wakes > 0 }).toEqual({ sent: [true], woken: true });
});

it("a reinstall made while the old offline token still ran, shown only by its late uninstall, is told ready again", async () => {
  const { services, shopDomain } = stack();
  await toldReady();

  // The merchant uninstalls and installs again within the hour of the stored token: no token
  // exchange, so no afterAuth; the admin's session tokens raise the install time.
  const uninstalledAt = new Date();
  await pause();
  const reinstalledAt = new Date();
  await services.db.shop.update({ where: { shopDomain }, data: { installedAt: reinstalledAt } });
  // The late uninstall is ignored, and is the sign Shopify holds a new install, not ready.
  expect((await uninstallWebhook(uninstalledAt)).status).toBe(200);
  expect((await services.db.shop.findUniqueOrThrow({ where: { shopDomain } })).uninstalledAt).toBeNull();
  await syncReadinessOfInstalledShops(services);

  const sent = await readinessSentSince(reinstalledAt);
  expect(sent).toEqual([true]);
});

it("a new offline token for the same install (the merchant opens the app after the last one ran out) keeps Shopify's readiness in view: removing the device then tells Shopify not ready", async () => {
  const { services, shopDomain, standin } = stack();
  await toldReady();

  // The token exchange runs afterAuth, which records an install: Shopify still holds this
  // install's readiness (ready), which the row can no longer vouch for.
  await recordInstall(services.db, shopDomain, new Date());
  const shop = await services.db.shop.findUniqueOrThrow({ where: { shopDomain } });
  expect((await removeGatewayCredentials(services, shopDomain, "sandbox", credentialsVersion(shop, "sandbox")!)).ok).toBe(true);
  await deliverDueMessages(services, { worker: "t" });
  expect(standin.state.configuration()?.ready).toBe(false);

  // Told once: the readiness pass has nothing more to send.
  expect(await syncReadinessOfInstalledShops(services)).toBe(0);
});
