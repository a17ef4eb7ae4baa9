-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "Session" (
    "id" TEXT NOT NULL,
    "shop" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "isOnline" BOOLEAN NOT NULL DEFAULT false,
    "scope" TEXT,
    "expires" TIMESTAMP(3),
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
    "refreshTokenExpires" TIMESTAMP(3),

    CONSTRAINT "Session_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Shop" (
    "id" TEXT NOT NULL,
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
    "reconcileLockedUntil" TIMESTAMP(3),
    "lastReconciledAt" TIMESTAMP(3),
    "lastWebhookAt" TIMESTAMP(3),
    "uninstalledAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Shop_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Payment" (
    "id" TEXT NOT NULL,
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
    "expiresAt" TIMESTAMP(3),
    "attention" TEXT,
    "attentionDetail" TEXT,
    "attentionResolvedAt" TIMESTAMP(3),
    "customerEmail" TEXT,
    "customerName" TEXT,
    "customerPhone" TEXT,
    "billingAddress" TEXT,
    "sessionClaimUntil" TIMESTAMP(3),
    "orderRequestedAt" TIMESTAMP(3),
    "responseStatus" INTEGER,
    "responseBody" TEXT,
    "shopifyOutcome" TEXT,
    "shopifyState" TEXT,
    "nextActionUrl" TEXT,
    "pendingSentAt" TIMESTAMP(3),
    "finalizedAt" TIMESTAMP(3),
    "lastCheckedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Payment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PaymentEvent" (
    "id" TEXT NOT NULL,
    "paymentId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "detail" TEXT NOT NULL DEFAULT '{}',
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "PaymentEvent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PaymentTransaction" (
    "id" TEXT NOT NULL,
    "paymentId" TEXT NOT NULL,
    "txHash" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "amount" TEXT NOT NULL,
    "confirmed" BOOLEAN NOT NULL,
    "block" INTEGER,
    "seenAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "PaymentTransaction_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SessionRequest" (
    "id" TEXT NOT NULL,
    "shopId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "shopifyId" TEXT NOT NULL,
    "gid" TEXT NOT NULL,
    "paymentShopifyId" TEXT NOT NULL,
    "amount" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "test" BOOLEAN NOT NULL DEFAULT false,
    "status" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SessionRequest_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "GatewayWebhook" (
    "id" TEXT NOT NULL,
    "shopId" TEXT NOT NULL,
    "gatewayEnv" TEXT NOT NULL,
    "nonce" TEXT NOT NULL,
    "signature" TEXT NOT NULL,
    "rawBody" TEXT NOT NULL,
    "orderId" TEXT,
    "status" TEXT,
    "receivedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "processedAt" TIMESTAMP(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lockedBy" TEXT,
    "lockedUntil" TIMESTAMP(3),
    "lastError" TEXT,

    CONSTRAINT "GatewayWebhook_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "RejectedWebhook" (
    "id" TEXT NOT NULL,
    "shopId" TEXT,
    "reason" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RejectedWebhook_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "OutboxMessage" (
    "id" TEXT NOT NULL,
    "shopDomain" TEXT NOT NULL,
    "paymentId" TEXT,
    "kind" TEXT NOT NULL,
    "dedupeKey" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lockedBy" TEXT,
    "lockedUntil" TIMESTAMP(3),
    "lastError" TEXT,
    "result" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "doneAt" TIMESTAMP(3),

    CONSTRAINT "OutboxMessage_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "GatewayCall" (
    "id" TEXT NOT NULL,
    "deviceHash" TEXT NOT NULL,
    "class" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "GatewayCall_pkey" PRIMARY KEY ("id")
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

-- AddForeignKey
ALTER TABLE "Payment" ADD CONSTRAINT "Payment_shopId_fkey" FOREIGN KEY ("shopId") REFERENCES "Shop"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PaymentEvent" ADD CONSTRAINT "PaymentEvent_paymentId_fkey" FOREIGN KEY ("paymentId") REFERENCES "Payment"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PaymentTransaction" ADD CONSTRAINT "PaymentTransaction_paymentId_fkey" FOREIGN KEY ("paymentId") REFERENCES "Payment"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SessionRequest" ADD CONSTRAINT "SessionRequest_shopId_fkey" FOREIGN KEY ("shopId") REFERENCES "Shop"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GatewayWebhook" ADD CONSTRAINT "GatewayWebhook_shopId_fkey" FOREIGN KEY ("shopId") REFERENCES "Shop"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RejectedWebhook" ADD CONSTRAINT "RejectedWebhook_shopId_fkey" FOREIGN KEY ("shopId") REFERENCES "Shop"("id") ON DELETE CASCADE ON UPDATE CASCADE;

