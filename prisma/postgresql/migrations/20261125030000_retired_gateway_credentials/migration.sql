-- Credentials removed while payments on them were in progress, kept sealed only to finish those
-- payments (read their orders, verify their notifications), then deleted.
ALTER TABLE "Shop" ADD COLUMN "liveRetiredDeviceKeyEnc" TEXT;
ALTER TABLE "Shop" ADD COLUMN "liveRetiredSecretKeyEnc" TEXT;
ALTER TABLE "Shop" ADD COLUMN "sandboxRetiredDeviceKeyEnc" TEXT;
ALTER TABLE "Shop" ADD COLUMN "sandboxRetiredSecretKeyEnc" TEXT;
