// The app's own workers ask Shopify again about a held uninstall (unconfirmed-uninstall.test.ts):
// the readiness pass, woken here instead of waiting its ten minutes, carries it out once the
// hour since the last check has passed and Shopify refuses the shop's token.
import { expect, it } from "vitest";
import { UNCONFIRMED_UNINSTALL_RECHECK_MS } from "../../app/shops/shopify-webhooks.server";
import { sendShopifyWebhook, uninstalledBody } from "../support/shopify-webhooks";
import { movingClock, stackForFile, waitFor } from "../support/stack";

const time = movingClock(() => stack());
const stack = stackForFile({ workers: true, clock: time.clock });

it("a frozen shop's held app/uninstalled is carried out by the readiness pass once Shopify refuses the token", async () => {
  const { services, standin, shopDomain } = stack();
  standin.state.setFault({ mode: "http_402", count: 1_000 });
  expect((await sendShopifyWebhook(stack(), "app/uninstalled", uninstalledBody(shopDomain))).status).toBe(200);
  expect(await services.db.unconfirmedUninstall.count()).toBe(1);

  standin.state.clearFaults();
  standin.state.uninstallApp();
  time.advanceAppOnly(UNCONFIRMED_UNINSTALL_RECHECK_MS);
  services.notify?.readiness();
  const shop = await waitFor(async () => {
    const row = await services.db.shop.findUnique({ where: { shopDomain } });
    return row?.uninstalledAt ? row : null;
  }, "the held uninstall carried out");
  expect(shop).toMatchObject({ sandboxDeviceKeyEnc: null, sandboxSecretKeyEnc: null, paymentsAppReady: false });
  expect(await services.db.unconfirmedUninstall.count()).toBe(0);
}, 60_000);
