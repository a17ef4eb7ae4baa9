-- Shopify's customers/data_request: what the app held about the customer, kept for the merchant to download.
-- CreateTable
CREATE TABLE "CustomerDataRequest" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "shopId" TEXT NOT NULL,
    "webhookId" TEXT NOT NULL,
    "dataRequestId" TEXT,
    "customerEmail" TEXT,
    "customerPhone" TEXT,
    "report" TEXT NOT NULL,
    "paymentCount" INTEGER NOT NULL,
    "receivedAt" DATETIME NOT NULL,
    "downloadedAt" DATETIME,
    CONSTRAINT "CustomerDataRequest_shopId_fkey" FOREIGN KEY ("shopId") REFERENCES "Shop" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "CustomerDataRequest_shopId_receivedAt_idx" ON "CustomerDataRequest"("shopId", "receivedAt");

-- CreateIndex
CREATE UNIQUE INDEX "CustomerDataRequest_shopId_webhookId_key" ON "CustomerDataRequest"("shopId", "webhookId");

