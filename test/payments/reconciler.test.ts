// The reconciler: one gateway call per device per cycle, whatever the number of open
// payments; quota reserve kept for new orders; payments still open near the end of
// Shopify's pending window are finalised and flagged.
import { expect, it } from "vitest";
import { hashDeviceKey } from "../../app/gateway/quota";
import { isDue, LIST_SPACING_MS, QUOTA_RESERVE, reconcileOnce } from "../../app/payments/reconcile";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { stackForFile, waitFor } from "../support/stack";

let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };

const stack = stackForFile({ workers: false, clock, gatewayLimits: "spec" });

const db = () => stack().services.db;

async function openPayment(pay: boolean) {
  const { session } = await stack().standin.state.startPayment({ test: true });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "choose_currency", currency: "BTC" });
  if (pay) await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "pay", amount: "exact" });
  return { session, payment };
}

async function deviceHash(): Promise<string> {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  return hashDeviceKey(stack().services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key")));
}

it("reads every open payment of a device with one call per cycle, and only when one is due", async () => {
  await openPayment(false);
  await openPayment(true);
  await openPayment(true);
  const hash = await deviceHash();
  const before = await db().gatewayCall.count({ where: { deviceHash: hash } });
  const notDue = await reconcileOnce(stack().services, { worker: "t" });
  expect(notDue.gatewayCalls).toBe(0);
  offsetMs += 16 * 60_000;
  const summary = await reconcileOnce(stack().services, { worker: "t" });
  expect(summary.gatewayCalls).toBe(1);
  expect(await db().gatewayCall.count({ where: { deviceHash: hash } })).toBe(before + 1);
  expect(await db().payment.count({ where: { state: "confirming" } })).toBe(2);
});

it("keeps a reserve of the quota for new orders", async () => {
  const hash = await deviceHash();
  offsetMs += LIST_SPACING_MS;
  const at = clock.now();
  // Spend the minute budget until one call less than the reserve is left.
  const inWindow = await db().gatewayCall.count({ where: { deviceHash: hash, at: { gt: new Date(at.getTime() - 60_000) } } });
  const spend = 60 - (QUOTA_RESERVE.minute - 1) - inWindow;
  await db().gatewayCall.createMany({ data: Array.from({ length: spend }, () => ({ deviceHash: hash, class: "general", at })) });
  const summary = await reconcileOnce(stack().services, { worker: "t" });
  expect(summary.skippedForQuota).toBe(1);
  expect(summary.gatewayCalls).toBe(0);
  await db().gatewayCall.deleteMany({ where: { deviceHash: hash, at } });
  expect((await reconcileOnce(stack().services, { worker: "t" })).gatewayCalls).toBe(1);
});

it("finalises a payment still open near the end of Shopify's 3-day pending window", async () => {
  const { session, payment } = await openPayment(true);
  const back = await fetch(stack().services.links.returnUrl(payment, "standby"), { redirect: "manual" });
  expect(back.status).toBe(303);
  expect(stack().standin.state.session(session.id)?.state.code).toBe("PENDING");
  offsetMs += 71 * 3_600_000;
  const summary = await reconcileOnce(stack().services, { worker: "t" });
  expect(summary.finalised).toBeGreaterThanOrEqual(1);
  const after = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(after.state).toBe("failed");
  expect(after.attention).toBe("pending_window_expired");
  const { deliverDueMessages } = await import("../../app/payments/outbox");
  await waitFor(async () => {
    await deliverDueMessages(stack().services, { worker: "t" });
    return stack().standin.state.session(session.id)?.state.code === "REJECTED";
  }, "the reject delivered");
});

it("checks a payment first after the shortest expiry window, then less and less often", () => {
  const now = new Date("2026-11-22T12:00:00Z");
  const at = (minutesAgo: number) => new Date(now.getTime() - minutesAgo * 60_000);
  expect(isDue({ createdAt: at(5), lastCheckedAt: at(5) }, now)).toBe(false);
  expect(isDue({ createdAt: at(16), lastCheckedAt: at(16) }, now)).toBe(true);
  expect(isDue({ createdAt: at(120), lastCheckedAt: at(20) }, now)).toBe(false);
  expect(isDue({ createdAt: at(120), lastCheckedAt: at(31) }, now)).toBe(true);
  expect(isDue({ createdAt: at(600), lastCheckedAt: at(100) }, now)).toBe(false);
  expect(isDue({ createdAt: at(3000), lastCheckedAt: at(361) }, now)).toBe(true);
});
