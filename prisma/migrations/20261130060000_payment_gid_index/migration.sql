-- A payment found by its Shopify session gid in the admin's search, without reading the shop's payments.
CREATE INDEX "Payment_shopId_gid_idx" ON "Payment"("shopId", "gid");
