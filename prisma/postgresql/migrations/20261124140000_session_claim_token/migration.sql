-- Each attempt at a payment session holds its claim with a token of its own: the order is sent and the answer stored only while the token is still the attempt's.
ALTER TABLE "Payment" ADD COLUMN "sessionClaimToken" TEXT;
