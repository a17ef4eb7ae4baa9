-- migrate: no-transaction
-- A payment found by one of its transaction hashes in the admin's search, without reading every transaction.
-- Built CONCURRENTLY: the instances of the release before keep writing transactions meanwhile.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "PaymentTransaction_txHash_idx" ON "PaymentTransaction"("txHash");
