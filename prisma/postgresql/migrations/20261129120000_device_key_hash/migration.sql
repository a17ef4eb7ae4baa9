-- A digest of each environment's device key in use, never the key, so that installed shops
-- connected to the same device can be told apart from shops on devices of their own (the
-- gateway sends a device's notifications to one notification URL only). Nullable: the release
-- before neither writes nor reads it during a rolling deploy, and the readiness pass fills it
-- for shops saved before it, and corrects what an instance of that release left behind.
ALTER TABLE "Shop" ADD COLUMN "liveDeviceKeyHash" TEXT;
ALTER TABLE "Shop" ADD COLUMN "sandboxDeviceKeyHash" TEXT;
