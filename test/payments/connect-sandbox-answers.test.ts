// Connecting the gateway sandbox tells the merchant what went wrong, and only what did: a
// sandbox that cannot be reached, one that answers something else than the sandbox's sign-up,
// and a failure of the app's own (its database) that is not the sandbox's and is not dressed
// up as one.
import { beforeAll, expect, it } from "vitest";
import type { PaymentsDeps } from "../../app/payments/deps";
import { connectSandbox } from "../../app/shops/onboarding.server";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });
beforeAll(() => stack().logger.info("connect-sandbox answers"));

const answering = (body: string, status = 200): typeof fetch => async () => new Response(body, { status, headers: { "content-type": "text/html" } });

it("a sandbox that cannot be reached is said to be unreachable", async () => {
  const refused: typeof fetch = async () => {
    throw new TypeError("fetch failed");
  };
  const result = await connectSandbox({ ...stack().services, fetch: refused }, "unreachable-sandbox.myshopify.com");
  expect(result).toMatchObject({ ok: false, kind: "unreachable", message: expect.stringContaining("cannot be reached") });
});

it("an answer that is not the sandbox's (a page, not JSON) is a refusal, not an unreachable sandbox", async () => {
  const result = await connectSandbox({ ...stack().services, fetch: answering("<html>Bad gateway</html>", 200) }, "html-sandbox.myshopify.com");
  expect(result).toEqual({ ok: false, kind: "gateway_error", message: "The gateway sandbox did not accept the sign-up." });
});

it.each([
  ["a device key with a space", { identifier: "a device key", secret_key: "00112233445566778899aabbccddeeff" }],
  ["a Secret Key too short to be one", { identifier: "0b7c2b8e-5f0e-4a4c-9d1e-6f3a2b1c0d9e", secret_key: "abcd" }],
])("a sign-up answered with a device the connect form would refuse (%s) is refused, and nothing is stored", async (_, device) => {
  const shopDomain = `odd-device-${device.secret_key.length}.myshopify.com`;
  const result = await connectSandbox({ ...stack().services, fetch: async () => Response.json({ device }) }, shopDomain);
  expect(result).toEqual({ ok: false, kind: "gateway_error", message: "The gateway sandbox did not accept the sign-up." });
  const shop = await stack().services.db.shop.findUnique({ where: { shopDomain } });
  expect(shop?.sandboxDeviceKeyEnc ?? null).toBeNull();
});

it("a failure of the app's own database while storing the device is not reported as the sandbox's", async () => {
  const { services } = stack();
  const shopDomain = "failing-store.myshopify.com";
  await services.db.shop.create({ data: { shopDomain, webhookToken: "failing-store-token-000000000000", installedAt: new Date() } });
  // The database refuses the credentials' write.
  const shop = new Proxy(services.db.shop, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (name !== "updateMany" || typeof value !== "function") return typeof value === "function" ? value.bind(target) : value;
      return () => Promise.reject(new Error("disk I/O error"));
    },
  });
  const db = new Proxy(services.db, { get: (target, name) => (name === "shop" ? shop : (Reflect.get(target, name) as unknown)) }) as PaymentsDeps["db"];
  await expect(connectSandbox({ ...services, db }, shopDomain)).rejects.toThrow("disk I/O error");
});
