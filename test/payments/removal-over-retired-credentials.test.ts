// Device A is replaced by B while a payment on A is in progress, so A's credentials are kept
// for it. Removing B while a payment on B is in progress keeps B's credentials in A's place, as
// connecting another device would: the merchant is asked knowing it, told it, and it is logged.
import { expect, it } from "vitest";
import { connectGateway, connectSandbox, credentialsVersion, paymentsOnEarlierCredentialsFollowed, removeGatewayCredentials } from "../../app/shops/onboarding.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { paymentThrough, stackForFile } from "../support/stack";

const logLines: string[] = [];
const stack = stackForFile({ workers: false, logLines });

const db = () => stack().services.db;
const shopRow = () => db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });

/** A payment in progress: its order made, the coin chosen, nothing paid yet. */
const pendingPayment = async () => (await paymentThrough(stack(), [{ action: "choose_currency", currency: "BTC" }])).payment;

const warnings = () => logLines.map((line) => JSON.parse(line) as { level: string; msg: string; replaced?: string }).filter((line) => line.level === "warn");

it("removing a device kept in the place of one whose payments are still in progress tells the merchant before and after, and logs it", async () => {
  await pendingPayment();
  const a = await shopRow();
  expect(await connectSandbox(stack().services, stack().shopDomain)).toMatchObject({ ok: true, notice: expect.any(String) });
  expect((await shopRow()).sandboxRetiredDeviceKeyEnc).toBe(a.sandboxDeviceKeyEnc);

  await pendingPayment();
  const b = await shopRow();
  // The question the connection page asks counts A's payment, which the removal leaves without A's credentials.
  expect(await paymentsOnEarlierCredentialsFollowed(stack().services, b, "sandbox")).toBe(1);
  const before = warnings().length;
  const removed = await removeGatewayCredentials(stack().services, stack().shopDomain, "sandbox", credentialsVersion(b, "sandbox")!);
  expect(removed).toMatchObject({
    ok: true,
    notice: expect.stringMatching(/^Payments in progress on the removed device will still be finished with it: .* The credentials of the device before it, kept until now for payments that may still be in progress on them, were deleted to make room/),
    shop: { sandboxDeviceKeyEnc: null, sandboxRetiredDeviceKeyEnc: b.sandboxDeviceKeyEnc },
  });
  expect(warnings().slice(before)).toEqual([expect.objectContaining({ msg: expect.stringMatching(/^Gateway credentials still needed by payments in progress were deleted/), replaced: "retired_over_earlier" })]);
});

it("removing a device connected again after its own removal loses nothing: no notice", async () => {
  // The test above left B removed and kept; the same device connected again holds the same pair as the retired slot.
  const kept = await shopRow();
  const { cipher } = stack().services;
  const deviceKey = cipher.decrypt(kept.sandboxRetiredDeviceKeyEnc!, credentialContext(kept.id, "sandbox", "device-key"));
  const secretKeyHex = cipher.decrypt(kept.sandboxRetiredSecretKeyEnc!, credentialContext(kept.id, "sandbox", "secret-key"));
  expect(await connectGateway(stack().services, stack().shopDomain, { env: "sandbox", deviceKey, secretKeyHex })).toMatchObject({ ok: true, notice: null });
  await pendingPayment();
  const again = await shopRow();
  expect(await paymentsOnEarlierCredentialsFollowed(stack().services, again, "sandbox")).toBe(0);
  const removed = await removeGatewayCredentials(stack().services, stack().shopDomain, "sandbox", credentialsVersion(again, "sandbox")!);
  expect(removed).toMatchObject({ ok: true, notice: null });
});
