// A shop's sandbox device as a gateway client of the test's own, to make many orders at once
// as shoppers would over hours: its own quota, far above the gateway's, so the app's budget for
// the device is left as it was.
import { createGatewayClient, type GatewayClient } from "../../app/gateway/client";
import { createMemoryQuotaStore, hashDeviceKey } from "../../app/gateway/quota";
import type { Clock } from "../../app/payments/deps";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import type { Stack } from "./stack";

/** The client, and the device's hash as the app's records of gateway calls name it. */
export async function shopSandboxClient(stack: Stack, shopDomain: string, clock: Clock): Promise<{ client: GatewayClient; deviceHash: string }> {
  const shop = await stack.services.db.shop.findUniqueOrThrow({ where: { shopDomain } });
  const deviceKey = stack.services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"));
  const client = createGatewayClient({
    baseUrl: stack.sandbox.baseUrl,
    deviceKey,
    clock: () => clock.now(),
    quota: { store: createMemoryQuotaStore({ generalPerMinute: 10_000, generalPerDay: 100_000, criticalPerMinute: 10_000, criticalPerDay: 100_000 }) },
  });
  return { client, deviceHash: hashDeviceKey(deviceKey) };
}
