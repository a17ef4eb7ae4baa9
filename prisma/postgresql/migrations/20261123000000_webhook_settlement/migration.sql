-- Payments settled from a signed webhook alone are checked by the next listing; listings are spaced per shop and environment.
ALTER TABLE "Shop" ADD COLUMN "listedLiveAt" TIMESTAMP(3);
ALTER TABLE "Shop" ADD COLUMN "listedSandboxAt" TIMESTAMP(3);
ALTER TABLE "Payment" ADD COLUMN "unverifiedSince" TIMESTAMP(3);
CREATE INDEX "Payment_unverifiedSince_idx" ON "Payment"("unverifiedSince");
