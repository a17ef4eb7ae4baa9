-- Refused notifications are counted per shop, reason and minute: a row stands for `count` of them.
-- Each row from before stands for one.
ALTER TABLE "RejectedWebhook" ADD COLUMN "count" INTEGER NOT NULL DEFAULT 1;
