-- migrate: no-transaction
-- The other installed shops connected to a shop's sandbox device, found without reading every shop.
-- Built CONCURRENTLY: the instances of the release before keep writing shop rows meanwhile.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Shop_sandboxDeviceKeyHash_idx" ON "Shop"("sandboxDeviceKeyHash");
