-- The other installed shops connected to a shop's sandbox device, found without reading every shop.
CREATE INDEX "Shop_sandboxDeviceKeyHash_idx" ON "Shop"("sandboxDeviceKeyHash");
