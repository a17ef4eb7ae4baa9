-- A payment's captures and voids found by the payment (a capture or void decided, an authorization settled), without reading every request of the shop.
CREATE INDEX "SessionRequest_shopId_paymentShopifyId_kind_idx" ON "SessionRequest"("shopId", "paymentShopifyId", "kind");
