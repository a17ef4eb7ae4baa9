-- Takes a slot of a device's gateway quota in one round trip (app/db/prisma-quota-store.server.ts):
-- the per-device advisory lock, then the insert if every window has room. Each statement of a
-- volatile function sees the rows committed before it starts, so the count after the lock
-- includes every call recorded by the instance that held the lock before. The windows' bounds
-- and limits come from the app; returns the number of calls recorded (0 or 1).
CREATE OR REPLACE FUNCTION "takeGatewayCall"(
    "callId" TEXT, "device" TEXT, "callClass" TEXT, "callAt" TIMESTAMP(3),
    "minuteSince" TIMESTAMP(3), "daySince" TIMESTAMP(3),
    "generalPerMinute" INTEGER, "generalPerDay" INTEGER, "criticalPerMinute" INTEGER, "criticalPerDay" INTEGER
) RETURNS INTEGER LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    "recorded" INTEGER;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext("device"));
    INSERT INTO "GatewayCall" ("id", "deviceHash", "class", "at")
    SELECT "callId", "device", "callClass", "callAt"
    FROM (
        SELECT
            COUNT(CASE WHEN c."at" > "minuteSince" THEN 1 END) AS "gMin",
            COUNT(*) AS "gDay",
            COUNT(CASE WHEN c."class" = 'critical' AND c."at" > "minuteSince" THEN 1 END) AS "cMin",
            COUNT(CASE WHEN c."class" = 'critical' THEN 1 END) AS "cDay"
        FROM "GatewayCall" AS c
        WHERE c."deviceHash" = "device" AND c."at" > "daySince"
    ) AS "used"
    WHERE "used"."gDay" < "generalPerDay" AND "used"."gMin" < "generalPerMinute"
      AND ("callClass" <> 'critical' OR ("used"."cDay" < "criticalPerDay" AND "used"."cMin" < "criticalPerMinute"));
    GET DIAGNOSTICS "recorded" = ROW_COUNT;
    RETURN "recorded";
END
$$;
