-- migrate: no-transaction
-- A gateway call's quota windows counted from the index alone: its class is in it, so the
-- count over a device's last day no longer reads each of that day's rows.
-- Built CONCURRENTLY: the instances of the release before keep taking calls meanwhile.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "GatewayCall_deviceHash_at_class_idx" ON "GatewayCall"("deviceHash", "at", "class");
