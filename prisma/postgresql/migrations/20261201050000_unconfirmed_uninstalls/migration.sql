-- An app/uninstalled or shop/redact Shopify could not confirm when it came, asked about again
-- until Shopify answers.
CREATE TABLE "UnconfirmedUninstall" (
    "id" TEXT NOT NULL,
    "shopId" TEXT NOT NULL,
    "topic" TEXT NOT NULL,
    "triggeredAt" TIMESTAMP(3),
    "receivedAt" TIMESTAMP(3) NOT NULL,
    "checkedAt" TIMESTAMP(3) NOT NULL,
    "checks" INTEGER NOT NULL DEFAULT 1,

    CONSTRAINT "UnconfirmedUninstall_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "UnconfirmedUninstall_checkedAt_idx" ON "UnconfirmedUninstall"("checkedAt");

CREATE UNIQUE INDEX "UnconfirmedUninstall_shopId_topic_key" ON "UnconfirmedUninstall"("shopId", "topic");

ALTER TABLE "UnconfirmedUninstall" ADD CONSTRAINT "UnconfirmedUninstall_shopId_fkey" FOREIGN KEY ("shopId") REFERENCES "Shop"("id") ON DELETE CASCADE ON UPDATE CASCADE;
