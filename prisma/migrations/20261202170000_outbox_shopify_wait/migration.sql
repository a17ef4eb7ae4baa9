-- The end of the wait Shopify asked for after a call's last attempt (Retry-After, or its cost
-- limit's restore time): the merchant's Check now does not send the call before it.
ALTER TABLE "OutboxMessage" ADD COLUMN "heldUntil" DATETIME;
