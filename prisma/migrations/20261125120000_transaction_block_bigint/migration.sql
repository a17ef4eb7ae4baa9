-- A transaction's block number declared 64 bits, as on PostgreSQL (SQLite's INTEGER already
-- holds 64 bits; the declared type is what the client reads the column as). SQLite cannot
-- change a column's type, so the table is built again under the same name, with its rows.
CREATE TABLE "new_PaymentTransaction" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "paymentId" TEXT NOT NULL,
    "txHash" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "amount" TEXT NOT NULL,
    "confirmed" BOOLEAN NOT NULL,
    "block" BIGINT,
    "seenAt" DATETIME NOT NULL,
    CONSTRAINT "PaymentTransaction_paymentId_fkey" FOREIGN KEY ("paymentId") REFERENCES "Payment" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_PaymentTransaction" ("id", "paymentId", "txHash", "currency", "amount", "confirmed", "block", "seenAt")
    SELECT "id", "paymentId", "txHash", "currency", "amount", "confirmed", "block", "seenAt" FROM "PaymentTransaction";
DROP TABLE "PaymentTransaction";
ALTER TABLE "new_PaymentTransaction" RENAME TO "PaymentTransaction";
CREATE UNIQUE INDEX "PaymentTransaction_paymentId_txHash_key" ON "PaymentTransaction"("paymentId", "txHash");
