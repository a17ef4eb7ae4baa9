-- The retention purge keeps each shop's newest readiness call (app.configure): it looks for a
-- later one of the same shop and kind, once per message it may delete. Without this index that
-- lookup read the whole outbox each time, and the purge outran the statement timeout.
CREATE INDEX "OutboxMessage_shopDomain_kind_createdAt_idx" ON "OutboxMessage"("shopDomain", "kind", "createdAt");
