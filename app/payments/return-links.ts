// Signed links back into the app (the gateway's redirect URLs and the app's own payment
// page). The signature binds a link to one payment of one shop.
import { createHmac, timingSafeEqual } from "node:crypto";
import type { ReturnLinks } from "./deps";

export function createReturnLinks(appUrl: string, secret: string): ReturnLinks {
  const base = appUrl.replace(/\/+$/, "");
  const key = createHmac("sha256", secret).update("payment-links/v1").digest();
  const sign = (payment: { id: string; shopId: string }) => createHmac("sha256", key).update(`${payment.shopId}:${payment.id}`).digest("base64url");
  return {
    returnUrl: (payment, outcome) => `${base}/payments/return/${payment.id}/${outcome}?sig=${sign(payment)}`,
    paymentPageUrl: (payment) => `${base}/pay/${payment.id}?sig=${sign(payment)}`,
    verify(payment, signature) {
      const expected = Buffer.from(sign(payment));
      const given = Buffer.from(signature);
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
  };
}
