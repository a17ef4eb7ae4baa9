// The Connection page's own remedy for credentials sealed under a dropped encryption key
// ("connect the device again") works through the page. The pages run on their own copy of the
// app's modules (Vite's in development, the Remix build in production) while the cipher that
// throws is the server's, so an unreadable pair is told by the error's name, not by
// `instanceof`: the page replaces or shows the credentials instead of answering 500.
import { beforeAll, expect, it } from "vitest";
import { getAdminPage, postAdminForm } from "../support/admin-pages";
import { connectSandbox } from "../../app/shops/onboarding.server";
import { stackForFile } from "../support/stack";

const logLines: string[] = [];
const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" }, logLines });
beforeAll(() => stack().logger.info("connection page over unreadable credentials: started"));
const failures = () => logLines.filter((line) => line.includes("Page request failed") && line.includes("CredentialDecryptionError")).slice(-1).map((line) => line.slice(0, 400));
const db = () => stack().services.db;
const shopRow = () => db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
const underLostKey = (sealed: string) => sealed.split(":").map((part, i) => (i === 1 ? "lost" : part)).join(":");

it("connecting a device on the Connection page over sandbox credentials no key opens replaces them (not a 500)", async () => {
  const shop = await shopRow();
  await db().shop.update({
    where: { id: shop.id },
    data: { sandboxDeviceKeyEnc: underLostKey(shop.sandboxDeviceKeyEnc!), sandboxSecretKeyEnc: underLostKey(shop.sandboxSecretKeyEnc!) },
  });
  // The page says the credentials cannot be read and asks to connect the device again.
  const page = await getAdminPage(stack(), "/app/onboarding");
  expect(page.status).toBe(200);
  expect(page.text).toContain("Cannot be read");

  const { deviceKey, secretKeyHex } = stack().sandbox.demo;
  const answer = await postAdminForm(stack(), "/app/onboarding", { intent: "connect", env: "sandbox", deviceKey, secretKeyHex });
  expect(answer.status, failures().join("\n")).toBe(200);
  expect(answer.text).toContain("The gateway sandbox device is connected.");
  expect((await shopRow()).sandboxDeviceKeyEnc).not.toBe(underLostKey(shop.sandboxDeviceKeyEnc!));
});

it("the Connection page opens while a replaced device's retired credentials cannot be read (not a 500)", async () => {
  // Readable credentials again (connected directly, not through the page), then a device
  // replaced while a payment was in progress on it keeps its credentials, retired.
  expect(await connectSandbox(stack().services, stack().shopDomain)).toMatchObject({ ok: true });
  const { delivery } = await stack().standin.state.startPayment({ test: true });
  expect(delivery.status, delivery.body).toBe(200);
  expect(await connectSandbox(stack().services, stack().shopDomain)).toMatchObject({ ok: true });
  const shop = await shopRow();
  expect(shop.sandboxRetiredDeviceKeyEnc).not.toBeNull();
  // Its key is dropped from CREDENTIALS_ENCRYPTION_KEYS; the device in use is sealed under the current one.
  await db().shop.update({
    where: { id: shop.id },
    data: { sandboxRetiredDeviceKeyEnc: underLostKey(shop.sandboxRetiredDeviceKeyEnc!), sandboxRetiredSecretKeyEnc: underLostKey(shop.sandboxRetiredSecretKeyEnc!) },
  });
  const page = await getAdminPage(stack(), "/app/onboarding");
  expect(page.status, failures().join("\n")).toBe(200);
});
