-- Whether Shopify may hold another readiness than "paymentsAppReady" for the shop's install (a
-- new offline token was issued, or an uninstall from before a reinstall arrived): the next
-- readiness sync sends it even when it did not change.
ALTER TABLE "Shop" ADD COLUMN "readinessUnconfirmed" BOOLEAN NOT NULL DEFAULT false;
