-- The order version a payment's gateway columns come from (the read's edited_at), so that an older read changes nothing;
-- stored webhooks are looked up by order, to tell a repeated webhook from news of a settled order (a payment after EX).
ALTER TABLE "Payment" ADD COLUMN "gatewayEditedAt" TIMESTAMP(3);
CREATE INDEX "GatewayWebhook_shopId_orderId_idx" ON "GatewayWebhook"("shopId", "orderId");
