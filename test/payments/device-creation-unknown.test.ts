// Creating a dedicated device is never sent twice (the gateway does not deduplicate): when its
// outcome is unknown (the gateway failed after making it, or something in front of the gateway
// answered for it), the merchant is told to look for the device before creating another, not
// just to try again.
import { afterEach, expect, it } from "vitest";
import { createDedicatedDevice } from "../../app/shops/onboarding.server";
import { stackForFile } from "../support/stack";

const stack = stackForFile();
afterEach(async () => {
  await stack().sandboxControl("/sandbox/faults", undefined, "DELETE");
});

it("a 500 after the device was made: the merchant is told to look for it in the dashboard before creating another", async () => {
  await stack().sandboxControl("/sandbox/faults", { endpoint: "device.create", kind: "http_500", count: 1, after_create: true });
  const result = await createDedicatedDevice(stack().services, stack().shopDomain, "sandbox", "Second till");
  expect(result.ok).toBe(false);
  expect(!result.ok && result.message).toMatch(/did not confirm whether it created the device.*gateway dashboard/);
});

it("without a fault the device is made, its key shown once", async () => {
  const result = await createDedicatedDevice(stack().services, stack().shopDomain, "sandbox", "Third till");
  expect(result).toMatchObject({ ok: true, device: { name: "Third till" } });
});
