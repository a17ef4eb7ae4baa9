-- A phone typed with its country code in brackets ("(+34) 611 222 333") is keyed "+34611222333"
-- (customerPhoneKey in app/shops/customer-identity.ts); the phone-key migration of 20261124230000
-- kept such phones as typed (a "+" that is not first), so Shopify's privacy webhooks, which name
-- a customer's phone in E.164, missed them. Only "(+" followed by digits, spaces and - ( ) . /
-- is reduced, to "+" and its digits; any other phone keeps its form.
UPDATE "Payment" SET "customerPhone" = '+' || REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(REPLACE(substr(trim("customerPhone"), 3), ' ', ''), '-', ''), '(', ''), ')', ''), '.', ''), '/', '') WHERE trim("customerPhone") GLOB '(+[0-9]*' AND substr(trim("customerPhone"), 3) NOT GLOB '*[^0-9 ()./-]*';
