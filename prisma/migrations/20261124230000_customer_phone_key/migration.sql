-- Customers' phones are kept as their digits alone, after a leading "+" (customerPhoneKey in
-- app/shops/customer-identity.ts), so Shopify's privacy webhooks find a phone written otherwise
-- at checkout. A lookup by both the key and the exact form would miss a phone stored before as
-- typed ("+34 611 222 333") when Shopify sends it in E.164, so the stored ones are reduced here.
-- SQLite has no regexp_replace: only a phone made of digits, spaces and - ( ) . / (a "+" first
-- alone) is reduced, to its key exactly: any other keeps its form (a half-reduced phone would
-- match no lookup) and is found by the phone exactly as Shopify sends it.
UPDATE "Payment" SET "customerPhone" = REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE("customerPhone", ' ', ''), '-', ''), '(', ''), ')', ''), '.', ''), '/', '') WHERE "customerPhone" GLOB '*[0-9]*' AND "customerPhone" NOT GLOB '*[^0-9+ ()./-]*' AND trim("customerPhone") NOT GLOB '?*+*';
