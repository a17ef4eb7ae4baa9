// The Health page tells the truth about failing credentials. A device the gateway no longer
// accepts (disabled in the gateway dashboard, or deleted) makes every payment session fail
// ("The gateway refused the shop's device key") and every reconciliation fail; the Health page
// must say so, not show a healthy integration. The check costs the device a gateway call at
// most once a minute while its key is taken, however often the page is loaded.
import { beforeAll, expect, it } from "vitest";
import { hashDeviceKey } from "../../app/gateway/quota";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { getAdminPage } from "../support/admin-pages";
import { movingClock, stackForFile } from "../support/stack";

const time = movingClock(() => stack());
const stack = stackForFile({ workers: false, clock: time.clock, env: { DEV_ADMIN_LOGIN: "true" } });
beforeAll(() => stack().logger.info("health refused device key: started"));

async function sandboxDeviceKey(): Promise<string> {
  const { services, shopDomain } = stack();
  const shop = await services.db.shop.findUniqueOrThrow({ where: { shopDomain } });
  return services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"));
}

/** The gateway calls the app recorded for the device. */
const callsOf = async (key: string) => stack().services.db.gatewayCall.count({ where: { deviceHash: hashDeviceKey(key) } });

it("the Health page says the gateway refuses the connected device's key, and stops saying it once the device is accepted again", async () => {
  const healthy = await getAdminPage(stack(), "/app/health");
  expect(healthy.status).toBe(200);
  expect(healthy.text).not.toMatch(/refuses the (gateway sandbox|live) device/i);

  // The merchant disables the device in the gateway dashboard; the page's last check is over a minute old.
  const key = await sandboxDeviceKey();
  await stack().sandboxControl(`/sandbox/devices/${key}/settings`, { enabled: false });
  await time.advance(61_000);
  const refused = await getAdminPage(stack(), "/app/health");
  expect(refused.status).toBe(200);
  expect(refused.text).toMatch(/The gateway refuses the gateway sandbox device's key/);
  // Nothing of the key is shown.
  expect(refused.html).not.toContain(key);

  // A refused key is checked at every load: the banner goes at once.
  await stack().sandboxControl(`/sandbox/devices/${key}/settings`, { enabled: true });
  const back = await getAdminPage(stack(), "/app/health");
  expect(back.text).not.toMatch(/refuses the (gateway sandbox|live) device/i);
});

it("a key the gateway took is not checked again within the minute, however often the page is loaded", async () => {
  await time.advance(61_000);
  const key = await sandboxDeviceKey();
  const before = await callsOf(key);
  for (let i = 0; i < 5; i++) expect((await getAdminPage(stack(), "/app/health")).status).toBe(200);
  expect(await callsOf(key)).toBe(before + 1);
  await time.advance(61_000);
  await getAdminPage(stack(), "/app/health");
  expect(await callsOf(key)).toBe(before + 2);
});
