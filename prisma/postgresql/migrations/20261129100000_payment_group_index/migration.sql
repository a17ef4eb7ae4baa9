-- migrate: no-transaction
-- A payment's resolve first looks for another payment of its checkout (same shop and group)
-- that Shopify accepted: read through this index, not through all of the shop's payments.
-- Built CONCURRENTLY: the payments table is the largest, and the previous release's instances
-- keep writing to it during the build.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Payment_shopId_groupId_idx" ON "Payment"("shopId", "groupId");
