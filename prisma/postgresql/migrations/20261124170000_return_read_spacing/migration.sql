-- The last gateway read made for a shopper's return: such reads are spaced, however often a return link is opened.
ALTER TABLE "Payment" ADD COLUMN "returnReadAt" TIMESTAMP(3);
