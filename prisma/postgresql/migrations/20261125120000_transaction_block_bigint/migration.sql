-- A transaction's block number in 64 bits: the gateway reports it as any safe integer, and
-- some chains' block (or slot) numbers are on their way past the 32 bits of INTEGER.
ALTER TABLE "PaymentTransaction" ALTER COLUMN "block" SET DATA TYPE BIGINT;
