-- CreateTable
CREATE TABLE "Session" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "shop" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "isOnline" BOOLEAN NOT NULL DEFAULT false,
    "scope" TEXT,
    "expires" DATETIME,
    "accessToken" TEXT NOT NULL,
    "userId" BIGINT,
    "firstName" TEXT,
    "lastName" TEXT,
    "email" TEXT,
    "accountOwner" BOOLEAN NOT NULL DEFAULT false,
    "locale" TEXT,
    "collaborator" BOOLEAN DEFAULT false,
    "emailVerified" BOOLEAN DEFAULT false,
    "refreshToken" TEXT,
    "refreshTokenExpires" DATETIME
);

-- CreateTable
CREATE TABLE "Shop" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "shopDomain" TEXT NOT NULL,
    "webhookToken" TEXT NOT NULL,
    "liveDeviceKeyEnc" TEXT,
    "liveSecretKeyEnc" TEXT,
    "liveDeviceKeyHint" TEXT,
    "sandboxDeviceKeyEnc" TEXT,
    "sandboxSecretKeyEnc" TEXT,
    "sandboxDeviceKeyHint" TEXT,
    "checkoutMode" TEXT NOT NULL DEFAULT 'gateway_choice',
    "fixedCurrency" TEXT,
    "offeredCurrencies" TEXT NOT NULL DEFAULT '[]',
    "gatewayLanguage" TEXT NOT NULL DEFAULT 'EN',
    "testMode" BOOLEAN NOT NULL DEFAULT false,
    "paymentsAppReady" BOOLEAN NOT NULL DEFAULT false,
    "reconcileLockedBy" TEXT,
    "reconcileLockedUntil" DATETIME,
    "lastReconciledAt" DATETIME,
    "lastWebhookAt" DATETIME,
    "uninstalledAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "Payment" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "shopId" TEXT NOT NULL,
    "shopifyPaymentId" TEXT NOT NULL,
    "gid" TEXT NOT NULL,
    "groupId" TEXT NOT NULL,
    "amount" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "test" BOOLEAN NOT NULL,
    "kind" TEXT NOT NULL,
    "cancelUrl" TEXT NOT NULL,
    "merchantLocale" TEXT,
    "gatewayEnv" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "gatewayOrderId" TEXT,
    "gatewayStatus" TEXT,
    "gatewayWebUrl" TEXT,
    "inputCurrency" TEXT,
    "cryptoAmount" TEXT,
    "receivedAmount" TEXT,
    "percentage" TEXT,
    "paymentUri" TEXT,
    "address" TEXT,
    "tagMemo" TEXT,
    "expiresAt" DATETIME,
    "attention" TEXT,
    "attentionDetail" TEXT,
    "attentionResolvedAt" DATETIME,
    "customerEmail" TEXT,
    "customerName" TEXT,
    "customerPhone" TEXT,
    "billingAddress" TEXT,
    "sessionClaimUntil" DATETIME,
    "orderRequestedAt" DATETIME,
    "responseStatus" INTEGER,
    "responseBody" TEXT,
    "shopifyOutcome" TEXT,
    "shopifyState" TEXT,
    "nextActionUrl" TEXT,
    "pendingSentAt" DATETIME,
    "finalizedAt" DATETIME,
    "lastCheckedAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Payment_shopId_fkey" FOREIGN KEY ("shopId") REFERENCES "Shop" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "PaymentEvent" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "paymentId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "detail" TEXT NOT NULL DEFAULT '{}',
    "at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "PaymentEvent_paymentId_fkey" FOREIGN KEY ("paymentId") REFERENCES "Payment" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "PaymentTransaction" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "paymentId" TEXT NOT NULL,
    "txHash" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "amount" TEXT NOT NULL,
    "confirmed" BOOLEAN NOT NULL,
    "block" INTEGER,
    "seenAt" DATETIME NOT NULL,
    CONSTRAINT "PaymentTransaction_paymentId_fkey" FOREIGN KEY ("paymentId") REFERENCES "Payment" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "SessionRequest" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "shopId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "shopifyId" TEXT NOT NULL,
    "gid" TEXT NOT NULL,
    "paymentShopifyId" TEXT NOT NULL,
    "amount" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "test" BOOLEAN NOT NULL DEFAULT false,
    "status" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "SessionRequest_shopId_fkey" FOREIGN KEY ("shopId") REFERENCES "Shop" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "GatewayWebhook" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "shopId" TEXT NOT NULL,
    "gatewayEnv" TEXT NOT NULL,
    "nonce" TEXT NOT NULL,
    "signature" TEXT NOT NULL,
    "rawBody" TEXT NOT NULL,
    "orderId" TEXT,
    "status" TEXT,
    "receivedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "processedAt" DATETIME,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lockedBy" TEXT,
    "lockedUntil" DATETIME,
    "lastError" TEXT,
    CONSTRAINT "GatewayWebhook_shopId_fkey" FOREIGN KEY ("shopId") REFERENCES "Shop" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "RejectedWebhook" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "shopId" TEXT,
    "reason" TEXT NOT NULL,
    "at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "RejectedWebhook_shopId_fkey" FOREIGN KEY ("shopId") REFERENCES "Shop" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "OutboxMessage" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "shopDomain" TEXT NOT NULL,
    "paymentId" TEXT,
    "kind" TEXT NOT NULL,
    "dedupeKey" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lockedBy" TEXT,
    "lockedUntil" DATETIME,
    "lastError" TEXT,
    "result" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    "doneAt" DATETIME
);

-- CreateTable
CREATE TABLE "GatewayCall" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "deviceHash" TEXT NOT NULL,
    "class" TEXT NOT NULL,
    "at" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "Session_shop_idx" ON "Session"("shop");

-- CreateIndex
CREATE UNIQUE INDEX "Shop_shopDomain_key" ON "Shop"("shopDomain");

-- CreateIndex
CREATE UNIQUE INDEX "Shop_webhookToken_key" ON "Shop"("webhookToken");

-- CreateIndex
CREATE INDEX "Payment_state_idx" ON "Payment"("state");

-- CreateIndex
CREATE INDEX "Payment_shopId_createdAt_idx" ON "Payment"("shopId", "createdAt");

-- CreateIndex
CREATE INDEX "Payment_attention_idx" ON "Payment"("attention");

-- CreateIndex
CREATE UNIQUE INDEX "Payment_shopId_shopifyPaymentId_key" ON "Payment"("shopId", "shopifyPaymentId");

-- CreateIndex
CREATE UNIQUE INDEX "Payment_gatewayEnv_gatewayOrderId_key" ON "Payment"("gatewayEnv", "gatewayOrderId");

-- CreateIndex
CREATE INDEX "PaymentEvent_paymentId_at_idx" ON "PaymentEvent"("paymentId", "at");

-- CreateIndex
CREATE UNIQUE INDEX "PaymentTransaction_paymentId_txHash_key" ON "PaymentTransaction"("paymentId", "txHash");

-- CreateIndex
CREATE UNIQUE INDEX "SessionRequest_shopId_kind_shopifyId_key" ON "SessionRequest"("shopId", "kind", "shopifyId");

-- CreateIndex
CREATE INDEX "GatewayWebhook_processedAt_nextAttemptAt_idx" ON "GatewayWebhook"("processedAt", "nextAttemptAt");

-- CreateIndex
CREATE UNIQUE INDEX "GatewayWebhook_shopId_signature_key" ON "GatewayWebhook"("shopId", "signature");

-- CreateIndex
CREATE INDEX "RejectedWebhook_shopId_at_idx" ON "RejectedWebhook"("shopId", "at");

-- CreateIndex
CREATE UNIQUE INDEX "OutboxMessage_dedupeKey_key" ON "OutboxMessage"("dedupeKey");

-- CreateIndex
CREATE INDEX "OutboxMessage_status_nextAttemptAt_idx" ON "OutboxMessage"("status", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "OutboxMessage_paymentId_idx" ON "OutboxMessage"("paymentId");

-- CreateIndex
CREATE INDEX "GatewayCall_deviceHash_at_idx" ON "GatewayCall"("deviceHash", "at");

