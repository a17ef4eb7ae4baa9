-- The reconciler's reads of the payments it follows, searched rather than scanned (SQLite has
-- no statistics to pick an index by, and searches none for IS NOT NULL): the state with the
-- creation time (open payments, and rejected ones still watched), and per shop and environment
-- the state and the time a signed notification's settlement awaits its check.
DROP INDEX "Payment_state_idx";
CREATE INDEX "Payment_state_createdAt_idx" ON "Payment"("state", "createdAt");
CREATE INDEX "Payment_shopId_gatewayEnv_state_idx" ON "Payment"("shopId", "gatewayEnv", "state");
CREATE INDEX "Payment_shopId_gatewayEnv_unverifiedSince_idx" ON "Payment"("shopId", "gatewayEnv", "unverifiedSince");
