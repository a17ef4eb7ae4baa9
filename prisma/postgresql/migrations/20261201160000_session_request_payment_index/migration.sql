-- migrate: no-transaction
-- A payment's captures and voids found by the payment (a capture or void decided, an authorization settled), without reading every request of the shop.
-- Built CONCURRENTLY: the instances of the release before keep taking Shopify's requests meanwhile.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "SessionRequest_shopId_paymentShopifyId_kind_idx" ON "SessionRequest"("shopId", "paymentShopifyId", "kind");
