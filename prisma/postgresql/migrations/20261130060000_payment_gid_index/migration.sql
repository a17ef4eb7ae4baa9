-- migrate: no-transaction
-- A payment found by its Shopify session gid in the admin's search, without reading the shop's payments.
-- Built CONCURRENTLY: the instances of the release before keep writing payments meanwhile.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Payment_shopId_gid_idx" ON "Payment"("shopId", "gid");
