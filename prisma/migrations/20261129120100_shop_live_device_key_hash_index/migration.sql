-- The other installed shops connected to a shop's live device, found without reading every shop.
CREATE INDEX "Shop_liveDeviceKeyHash_idx" ON "Shop"("liveDeviceKeyHash");
