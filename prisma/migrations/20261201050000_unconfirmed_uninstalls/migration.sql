-- An app/uninstalled or shop/redact Shopify could not confirm when it came, asked about again
-- until Shopify answers.
CREATE TABLE "UnconfirmedUninstall" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "shopId" TEXT NOT NULL,
    "topic" TEXT NOT NULL,
    "triggeredAt" DATETIME,
    "receivedAt" DATETIME NOT NULL,
    "checkedAt" DATETIME NOT NULL,
    "checks" INTEGER NOT NULL DEFAULT 1,
    CONSTRAINT "UnconfirmedUninstall_shopId_fkey" FOREIGN KEY ("shopId") REFERENCES "Shop" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

CREATE INDEX "UnconfirmedUninstall_checkedAt_idx" ON "UnconfirmedUninstall"("checkedAt");

CREATE UNIQUE INDEX "UnconfirmedUninstall_shopId_topic_key" ON "UnconfirmedUninstall"("shopId", "topic");
