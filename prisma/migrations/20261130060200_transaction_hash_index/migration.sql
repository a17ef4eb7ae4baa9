-- A payment found by one of its transaction hashes in the admin's search, without reading every transaction.
CREATE INDEX "PaymentTransaction_txHash_idx" ON "PaymentTransaction"("txHash");
