// Shopify is told whether the payment method can be offered each time that changes. A
// readiness call that failed and is retried after a newer one was delivered sends the shop's
// readiness as it is then, never the older value it was stored with.
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
