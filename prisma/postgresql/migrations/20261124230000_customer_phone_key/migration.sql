-- Customers' phones are kept as their digits alone, after a leading "+" (customerPhoneKey in
-- app/shops/customer-identity.ts), so Shopify's privacy webhooks find a phone written otherwise
-- at checkout. A lookup by both the key and the exact form would miss a phone stored before as
-- typed ("+34 611 222 333") when Shopify sends it in E.164, so the stored ones are reduced here.
-- As on SQLite (which has no regexp_replace), only a phone made of digits, spaces and - ( ) . /
-- (a "+" first alone) is reduced; any other keeps its form and is found by its exact form.
UPDATE "Payment" SET "customerPhone" = regexp_replace("customerPhone", '[^0-9+]', '', 'g') WHERE "customerPhone" ~ '[0-9]' AND "customerPhone" ~ '^ *\+?[0-9 ()./-]*$';
