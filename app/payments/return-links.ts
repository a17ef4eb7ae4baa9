// Signed links back into the app (the gateway's redirect URLs and the app's own payment
// page). The signature binds a link to one payment of one shop. Links are signed with a key
// drawn from the app's client secret; after the secret is rotated, links signed with the
// previous one (in the gateway's orders still open, in shoppers' open tabs) are still taken.
import { createHmac, timingSafeEqual } from "node:crypto";
import type { ReturnLinks } from "./deps";

export function createReturnLinks(appUrl: string, secret: string, previousSecret?: string): ReturnLinks {
  const base = appUrl.replace(/\/+$/, "");
  const signer = (from: string) => {
    const key = createHmac("sha256", from).update("payment-links/v1").digest();
    return (payment: { id: string; shopId: string }) => createHmac("sha256", key).update(`${payment.shopId}:${payment.id}`).digest("base64url");
  };
  const sign = signer(secret);
  const signers = previousSecret ? [sign, signer(previousSecret)] : [sign];
  return {
    returnUrl: (payment, outcome) => `${base}/payments/return/${payment.id}/${outcome}?sig=${sign(payment)}`,
    paymentPageUrl: (payment) => `${base}/pay/${payment.id}?sig=${sign(payment)}`,
    verify(payment, signature) {
      const given = Buffer.from(signature);
      // Every signer is asked, so the time taken does not tell which one matched.
      return signers.map((signed) => Buffer.from(signed(payment))).reduce((matched, expected) => (expected.length === given.length && timingSafeEqual(expected, given)) || matched, false);
    },
  };
}
