// Shopify is told the method is ready exactly once when the merchant's
// Connect is submitted twice at once (a double click, two tabs), and a connection and a removal
// saved at the same moment in two tabs leave Shopify told what the row holds.
import { expect, it } from "vitest";
import { deliverDueMessages } from "../../app/payments/outbox";
import { connectGateway, credentialsVersion, removeGatewayCredentials, updateShopSettings } from "../../app/shops/onboarding.server";
import { readyToTakePayments } from "../../app/shops/gateway-directory.server";
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

const shopRow = () => stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });

async function readinessCallsSince(since: Date): Promise<boolean[]> {
  const { services, shopDomain } = stack();
  const sent = await services.db.outboxMessage.findMany({ where: { shopDomain, kind: "app.configure", createdAt: { gte: since } }, orderBy: { createdAt: "asc" }, select: { payload: true } });
  return sent.map((message) => (JSON.parse(message.payload) as { ready: boolean }).ready);
}

it("Connect submitted twice at once tells Shopify ready once", async () => {
  const { services, shopDomain, sandbox, standin } = stack();
  expect((await updateShopSettings(services, shopDomain, settings(true))).ok).toBe(true);
  await deliverDueMessages(services, { worker: "t" });
  const connected = await shopRow();
  expect(connected.paymentsAppReady).toBe(true);
  // The merchant removes the sandbox device (no payment on it): Shopify is told not ready.
  expect((await removeGatewayCredentials(services, shopDomain, "sandbox", credentialsVersion(connected, "sandbox")!)).ok).toBe(true);
  await deliverDueMessages(services, { worker: "t" });
  expect(standin.state.configuration()?.ready).toBe(false);

  const since = new Date();
  const changesBefore = standin.state.configurationChanges().length;
  const input = { env: "sandbox", deviceKey: sandbox.demo.deviceKey, secretKeyHex: sandbox.demo.secretKeyHex };
  const [first, second] = await Promise.all([connectGateway(services, shopDomain, input), connectGateway(services, shopDomain, input)]);
  expect(first.ok && second.ok).toBe(true);
  await deliverDueMessages(services, { worker: "t" });
  expect(standin.state.configuration()?.ready).toBe(true);
  // One change of readiness, one call.
  expect(await readinessCallsSince(since)).toEqual([true]);
  expect(standin.state.configurationChanges().length - changesBefore).toBe(1);
});

it("test mode turned off in one tab while the sandbox is being connected in another leaves Shopify told not ready", async () => {
  const { services, shopDomain, sandbox, standin } = stack();
  const row = await shopRow();
  expect(row.testMode).toBe(true);
  // The sandbox device is removed: not ready.
  expect((await removeGatewayCredentials(services, shopDomain, "sandbox", credentialsVersion(row, "sandbox")!)).ok).toBe(true);
  await deliverDueMessages(services, { worker: "t" });
  expect((await shopRow()).paymentsAppReady).toBe(false);
  expect(standin.state.configuration()?.ready).toBe(false);

  // Tab 1 connects the sandbox device; tab 2 saves the settings with test mode off at the very
  // moment tab 1's credentials are written, before tab 1 tells Shopify.
  let other: Promise<unknown> | null = null;
  const shops = new Proxy(services.db.shop, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== "function") return value;
      if (name !== "findUniqueOrThrow") return value.bind(target);
      return async (args: unknown) => {
        const result = await (value as (a: unknown) => Promise<unknown>).call(target, args);
        if (other === null) {
          other = updateShopSettings(services, shopDomain, settings(false));
          expect(await other).toMatchObject({ ok: true });
        }
        return result;
      };
    },
  });
  const db = new Proxy(services.db, { get: (target, name) => (name === "shop" ? shops : (Reflect.get(target, name) as unknown)) }) as typeof services.db;
  const connected = await connectGateway({ ...services, db }, shopDomain, { env: "sandbox", deviceKey: sandbox.demo.deviceKey, secretKeyHex: sandbox.demo.secretKeyHex });
  expect(connected.ok).toBe(true);
  expect(other).not.toBeNull();
  await deliverDueMessages(services, { worker: "t" });
  const after = await shopRow();
  // Test mode is off and no live device is connected: no real checkout can be taken.
  expect(after.testMode, "test mode").toBe(false);
  expect(readyToTakePayments(services.gateways, after), "can take payments").toBe(false);
  expect(after.paymentsAppReady, "the row's readiness").toBe(false);
  expect(standin.state.configuration()?.ready, "what Shopify was told").toBe(false);
});
