-- The customers/data_request webhooks taken, kept after their requests are deleted, so that a
-- redelivery stores nothing again; the requests held now count as taken.
CREATE TABLE "DataRequestDelivery" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "shopId" TEXT NOT NULL,
    "webhookId" TEXT NOT NULL,
    "receivedAt" DATETIME NOT NULL,
    CONSTRAINT "DataRequestDelivery_shopId_fkey" FOREIGN KEY ("shopId") REFERENCES "Shop" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE INDEX "DataRequestDelivery_receivedAt_idx" ON "DataRequestDelivery"("receivedAt");

CREATE UNIQUE INDEX "DataRequestDelivery_shopId_webhookId_key" ON "DataRequestDelivery"("shopId", "webhookId");

INSERT INTO "DataRequestDelivery" ("id", "shopId", "webhookId", "receivedAt")
SELECT "id", "shopId", "webhookId", "receivedAt" FROM "CustomerDataRequest";
