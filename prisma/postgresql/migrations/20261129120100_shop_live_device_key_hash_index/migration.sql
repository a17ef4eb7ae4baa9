-- migrate: no-transaction
-- The other installed shops connected to a shop's live device, found without reading every shop.
-- Built CONCURRENTLY: the instances of the release before keep writing shop rows meanwhile.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Shop_liveDeviceKeyHash_idx" ON "Shop"("liveDeviceKeyHash");
