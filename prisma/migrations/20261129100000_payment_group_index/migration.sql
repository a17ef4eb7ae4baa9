-- A payment's resolve first looks for another payment of its checkout (same shop and group)
-- that Shopify accepted: read through this index, not through all of the shop's payments.
CREATE INDEX "Payment_shopId_groupId_idx" ON "Payment"("shopId", "groupId");
