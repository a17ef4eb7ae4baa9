-- The retention pass deletes refused webhooks older than RETENTION_DAYS across every shop.
CREATE INDEX "RejectedWebhook_at_idx" ON "RejectedWebhook"("at");
