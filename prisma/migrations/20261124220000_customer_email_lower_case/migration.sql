-- Customers' e-mails are kept in lower case (app/shops/customer-identity.ts), so Shopify's privacy
-- webhooks find a customer whatever the case they typed at checkout. SQLite's lower() and trim()
-- fold ASCII letters and spaces only, so only addresses of printable ASCII alone are lowered
-- here; the others keep their form, and are found by the address exactly as Shopify sends it.
UPDATE "Payment" SET "customerEmail" = lower(trim("customerEmail")) WHERE "customerEmail" IS NOT NULL AND "customerEmail" NOT GLOB '*[^ -~]*';
UPDATE "CustomerDataRequest" SET "customerEmail" = lower(trim("customerEmail")) WHERE "customerEmail" IS NOT NULL AND "customerEmail" NOT GLOB '*[^ -~]*';
