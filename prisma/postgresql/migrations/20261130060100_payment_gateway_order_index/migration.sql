-- migrate: no-transaction
-- A payment found by its gateway order's identifier in the admin's search, without reading the shop's payments.
-- Built CONCURRENTLY: the instances of the release before keep writing payments meanwhile.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Payment_shopId_gatewayOrderId_idx" ON "Payment"("shopId", "gatewayOrderId");
