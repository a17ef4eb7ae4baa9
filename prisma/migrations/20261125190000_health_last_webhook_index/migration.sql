-- The health page's last notification of a shop, read from the newest of its webhooks rather
-- than from all of them (a shop keeps up to RETENTION_DAYS of them).
CREATE INDEX "GatewayWebhook_shopId_receivedAt_idx" ON "GatewayWebhook"("shopId", "receivedAt");
