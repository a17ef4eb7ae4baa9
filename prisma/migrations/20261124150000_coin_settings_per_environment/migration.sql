-- The fixed coin and the coins offered on the app's page, per gateway environment: the live gateway and the sandbox name
-- their coins differently, so one setting chosen from one environment's list made every order of the other refused.
-- The values so far go to the environment the settings page listed its coins from: the sandbox in test mode and live
-- otherwise, or the one of them that has a device (with neither, the one test mode names). The old columns stay, unused,
-- until every instance runs this release: one still on the previous release reads them during a rolling deploy.
ALTER TABLE "Shop" ADD COLUMN "liveFixedCurrency" TEXT;
ALTER TABLE "Shop" ADD COLUMN "sandboxFixedCurrency" TEXT;
ALTER TABLE "Shop" ADD COLUMN "liveOfferedCurrencies" TEXT NOT NULL DEFAULT '[]';
ALTER TABLE "Shop" ADD COLUMN "sandboxOfferedCurrencies" TEXT NOT NULL DEFAULT '[]';
UPDATE "Shop" SET "sandboxFixedCurrency" = "fixedCurrency", "sandboxOfferedCurrencies" = "offeredCurrencies"
WHERE CASE WHEN "testMode" THEN "sandboxDeviceKeyEnc" IS NOT NULL OR "liveDeviceKeyEnc" IS NULL ELSE "liveDeviceKeyEnc" IS NULL AND "sandboxDeviceKeyEnc" IS NOT NULL END;
UPDATE "Shop" SET "liveFixedCurrency" = "fixedCurrency", "liveOfferedCurrencies" = "offeredCurrencies"
WHERE NOT (CASE WHEN "testMode" THEN "sandboxDeviceKeyEnc" IS NOT NULL OR "liveDeviceKeyEnc" IS NULL ELSE "liveDeviceKeyEnc" IS NULL AND "sandboxDeviceKeyEnc" IS NOT NULL END);
