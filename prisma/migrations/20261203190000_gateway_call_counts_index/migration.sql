-- A gateway call's quota windows counted from the index alone: its class is in it, so the
-- count over a device's last day no longer reads each of that day's rows.
CREATE INDEX "GatewayCall_deviceHash_at_class_idx" ON "GatewayCall"("deviceHash", "at", "class");
DROP INDEX "GatewayCall_deviceHash_at_idx";
