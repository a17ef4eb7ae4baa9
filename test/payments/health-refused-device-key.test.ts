// The Health page tells the truth about failing credentials. A device the
// gateway no longer accepts (disabled in the gateway dashboard, or deleted) makes every payment
// session fail ("The gateway refused the shop's device key") and every reconciliation fail; the
// Health page must say so, not show a healthy integration.
import { beforeAll, expect, it } from "vitest";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { getAdminPage } from "../support/admin-pages";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
beforeAll(() => stack().logger.info("health refused device key: started"));

async function sandboxDeviceKey(): Promise<string> {
  const { services, shopDomain } = stack();
  const shop = await services.db.shop.findUniqueOrThrow({ where: { shopDomain } });
  return services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"));
}

it("the Health page says the gateway refuses the connected device's key, and stops saying it once the device is accepted again", async () => {
  const healthy = await getAdminPage(stack(), "/app/health");
  expect(healthy.status).toBe(200);
  expect(healthy.text).not.toMatch(/refuses the (gateway sandbox|live) device/i);

  // The merchant disables the device in the gateway dashboard.
  const key = await sandboxDeviceKey();
  await stack().sandboxControl(`/sandbox/devices/${key}/settings`, { enabled: false });
  const refused = await getAdminPage(stack(), "/app/health");
  expect(refused.status).toBe(200);
  expect(refused.text).toMatch(/The gateway refuses the gateway sandbox device's key/);
  // Nothing of the key is shown.
  expect(refused.html).not.toContain(key);

  await stack().sandboxControl(`/sandbox/devices/${key}/settings`, { enabled: true });
  const back = await getAdminPage(stack(), "/app/health");
  expect(back.text).not.toMatch(/refuses the (gateway sandbox|live) device/i);
});
