-- Payments settled from a signed webhook alone are checked by the next listing; listings are spaced per shop and environment.
ALTER TABLE "Shop" ADD COLUMN "listedLiveAt" DATETIME;
ALTER TABLE "Shop" ADD COLUMN "listedSandboxAt" DATETIME;
ALTER TABLE "Payment" ADD COLUMN "unverifiedSince" DATETIME;
CREATE INDEX "Payment_unverifiedSince_idx" ON "Payment"("unverifiedSince");
