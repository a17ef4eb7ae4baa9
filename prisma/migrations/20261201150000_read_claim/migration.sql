-- When a read for someone waiting (the shopper's payment page, the merchant's Check now) was last
-- begun: such reads are spaced on it, so lastCheckedAt moves only with a read that answered.
ALTER TABLE "Payment" ADD COLUMN "readClaimedAt" DATETIME;
