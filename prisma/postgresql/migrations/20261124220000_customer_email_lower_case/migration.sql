-- Customers' e-mails are kept in lower case (app/shops/customer-identity.ts), so Shopify's privacy
-- webhooks find a customer whatever the case they typed at checkout.
UPDATE "Payment" SET "customerEmail" = lower(trim("customerEmail")) WHERE "customerEmail" IS NOT NULL;
UPDATE "CustomerDataRequest" SET "customerEmail" = lower(trim("customerEmail")) WHERE "customerEmail" IS NOT NULL;
