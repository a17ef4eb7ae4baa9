// Connect's key check is a call on the device like any other: it counts in the device's budget,
// which the app's instances share through the database, and it is not sent while that budget is
// spent (it would meet the gateway's 429, and take a call the device's payments need).
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { hashDeviceKey } from "../../app/gateway/quota";
import { connectGateway } from "../../app/shops/onboarding.server";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });

const callsOf = (deviceKey: string) => stack().services.db.gatewayCall.count({ where: { deviceHash: hashDeviceKey(deviceKey) } });

it("the key check is counted in the device's shared budget", async () => {
  const { services, shopDomain, sandbox } = stack();
  const before = await callsOf(sandbox.demo.deviceKey);
  const connected = await connectGateway(services, shopDomain, { env: "sandbox", deviceKey: sandbox.demo.deviceKey, secretKeyHex: sandbox.demo.secretKeyHex });
  expect(connected.ok).toBe(true);
  expect(await callsOf(sandbox.demo.deviceKey)).toBe(before + 1);
});

it("while the device's minute is spent, the key is not checked and the merchant is told to try again in a minute", async () => {
  const { services, shopDomain, sandbox, env } = stack();
  const deviceKey = sandbox.demo.deviceKey;
  const now = new Date();
  // The device's payments, on this or another instance, spent the minute.
  await services.db.gatewayCall.createMany({ data: Array.from({ length: env.GATEWAY_LIMIT_PER_MINUTE }, () => ({ id: randomUUID(), deviceHash: hashDeviceKey(deviceKey), class: "general", at: now })) });
  const before = await callsOf(deviceKey);
  const connected = await connectGateway(services, shopDomain, { env: "sandbox", deviceKey, secretKeyHex: sandbox.demo.secretKeyHex });
  expect(connected).toMatchObject({ ok: false, kind: "gateway_error", message: "The gateway is limiting requests for this device. Try again in a minute." });
  expect(await callsOf(deviceKey)).toBe(before);
});
