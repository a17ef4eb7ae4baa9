// Shopify is told whether the payment method can be offered each time that changes. A
// readiness call that failed and is retried after a newer one was delivered sends the shop's
// readiness as it is then, never the older value it was stored with. A readiness call Shopify
// refused is made again at the next save, even when the readiness did not change.
import { expect, it } from "vitest";
import { deliverDueMessages } from "../../app/payments/outbox";
import { updateShopSettings } from "../../app/shops/onboarding.server";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });

const settings = (testMode: boolean) => ({
  checkoutMode: "gateway_choice",
  gatewayLanguage: "EN",
  testMode,
  readOrderOnWebhook: false,
  liveOfferedCurrencies: [],
  sandboxOfferedCurrencies: [],
});

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
