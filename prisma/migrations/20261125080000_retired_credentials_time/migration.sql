-- When each environment's retired credentials were taken out of use: the payments begun on them are those created
-- before, and only those keep them and have their notifications verified with their Secret Key. A pair retired before
-- this migration has no recorded time: it takes the migration's, so every payment that exists now counts as begun on
-- it (as every payment of its environment did until now), and none made after. A pair an instance of the release before
-- retires during a rolling deploy is given its time by the next retention pass, in the same way.
ALTER TABLE "Shop" ADD COLUMN "liveRetiredAt" DATETIME;
ALTER TABLE "Shop" ADD COLUMN "sandboxRetiredAt" DATETIME;
-- As the Prisma client writes its times on SQLite (UTC, with milliseconds).
UPDATE "Shop" SET "liveRetiredAt" = strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now') WHERE "liveRetiredDeviceKeyEnc" IS NOT NULL;
UPDATE "Shop" SET "sandboxRetiredAt" = strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now') WHERE "sandboxRetiredDeviceKeyEnc" IS NOT NULL;
