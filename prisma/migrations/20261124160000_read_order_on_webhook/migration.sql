-- A shop may ask for every signed final webhook to be confirmed by a read of the order before Shopify is told.
ALTER TABLE "Shop" ADD COLUMN "readOrderOnWebhook" BOOLEAN NOT NULL DEFAULT false;
