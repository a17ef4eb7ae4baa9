// What the order's time means for the shopper, decided the same way on the server and in
// the browser (when the countdown reaches zero). A partly paid order stays AC at the
// gateway after its time has run out, so no expiry is notified, and the rest sent late
// ends it OC with the Shopify payment rejected: once the time is up the page asks for
// nothing more, and says what arrived and what to do.
import type { ShopperStatus } from "./texts";

/** The status once the order's time has run out (expiresAtMs <= nowMs): waiting becomes expired, partial becomes partial_expired. */
export function statusAt(status: ShopperStatus, expiresAtMs: number | null, nowMs: number): ShopperStatus {
  if (expiresAtMs === null || expiresAtMs > nowMs) return status;
  if (status === "waiting") return "expired";
  if (status === "partial") return "partial_expired";
  return status;
}

/** Whether the page shows what to send (QR code, amount, address, tag/memo): only while the shopper still has something to pay. */
export function asksForPayment(status: ShopperStatus): boolean {
  return status === "waiting" || status === "partial";
}
