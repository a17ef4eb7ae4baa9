-- A payment found by its gateway order's identifier in the admin's search, without reading the shop's payments.
CREATE INDEX "Payment_shopId_gatewayOrderId_idx" ON "Payment"("shopId", "gatewayOrderId");
