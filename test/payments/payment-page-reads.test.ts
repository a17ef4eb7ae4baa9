// When the shopper's payment page reads the order from the gateway: not while the device's
// quota is down to the reserve kept for new orders, and after the order's time ran out only
// once to learn how it ended, then every quarter of an hour at most (a partly paid order stays
// open at the gateway for days, and a tab left open on it must not spend the shop's quota); and
// between its quiet reads, once a notification of the order came in, from the order's own gateway.
import { beforeAll, expect, it } from "vitest";
import { hashDeviceKey } from "../../app/gateway/quota";
import { EXPIRED_QUIET_MS, paymentForLink, refreshIfDue, REFRESH_QUIET_MS } from "../../app/payment-page/payment-page.server";
import { isDue, QUOTA_RESERVE } from "../../app/payments/reconcile";
import { createOrderWithCurrency } from "../../app/payments/start-payment-session";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, gatewayLimits: "spec" });
const db = () => stack().services.db;

beforeAll(async () => {
  stack().logger.info("payment-page-reads: started");
  await db().shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

async function deviceHash(): Promise<string> {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  return hashDeviceKey(stack().services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key")));
}

/** A payment with its gateway order (ETH), as the page loads it. */
async function paymentOnThePage() {
  const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "en" });
  const stored = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  expect(await createOrderWithCurrency(stack().services, stored.id, "ETH")).toMatchObject({ ok: true });
  return async (columns: { lastCheckedAt: Date; expiresAt?: Date; readClaimedAt?: Date | null }) => {
    // Unless told otherwise, the last read begun is the one that answered.
    await db().payment.update({ where: { id: stored.id }, data: { readClaimedAt: null, ...columns } });
    const url = new URL(delivery.redirectUrl!);
    return (await paymentForLink(stack().services, { paymentId: stored.id }, url))!;
  };
}

/** A notification of `orderId` (held, processed) as the inbox stores it, from `gatewayEnv`. */
async function notified(orderId: string, gatewayEnv: string, status: string) {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  const body = JSON.stringify({ identifier: orderId, status });
  await db().gatewayWebhook.create({ data: { shopId: shop.id, gatewayEnv, nonce: `n-${gatewayEnv}-${Date.now()}`, signature: `s-${gatewayEnv}-${Date.now()}`, rawBody: body, orderId, status, processedAt: new Date() } });
}

async function readsBy(load: () => Promise<unknown>): Promise<number> {
  const hash = await deviceHash();
  const before = await db().gatewayCall.count({ where: { deviceHash: hash } });
  await load();
  return (await db().gatewayCall.count({ where: { deviceHash: hash } })) - before;
}

it("after the order's time ran out, the page reads it once, then seldom: not every minute, as a quiet page does, but every quarter of an hour", async () => {
  const pageAt = await paymentOnThePage();
  const now = Date.now();
  const expiredAt = new Date(now - 30 * 60_000);
  // Last read before the expiry: read now, to learn how the order ended.
  expect(await readsBy(async () => refreshIfDue(stack().services, await pageAt({ lastCheckedAt: new Date(expiredAt.getTime() - 1_000), expiresAt: expiredAt })))).toBe(1);
  // Read 20 s ago, after the expiry: nothing new to ask, so no read every 15 s.
  expect(await readsBy(async () => refreshIfDue(stack().services, await pageAt({ lastCheckedAt: new Date(now - 20_000), expiresAt: expiredAt })))).toBe(0);
  // A quiet page's interval later: still nothing (a tab left open would read the gateway 1,440 times a day).
  expect(await readsBy(async () => refreshIfDue(stack().services, await pageAt({ lastCheckedAt: new Date(now - REFRESH_QUIET_MS - 1_000), expiresAt: expiredAt })))).toBe(0);
  // A quarter of an hour later: read again.
  expect(await readsBy(async () => refreshIfDue(stack().services, await pageAt({ lastCheckedAt: new Date(now - EXPIRED_QUIET_MS - 1_000), expiresAt: expiredAt })))).toBe(1);
});

it("a page due for a read leaves the quota's reserve to new orders", async () => {
  const pageAt = await paymentOnThePage();
  const due = { lastCheckedAt: new Date(Date.now() - 120_000) };
  // Spend the minute's budget down to one call less than the reserve.
  const hash = await deviceHash();
  const at = new Date();
  const inWindow = await db().gatewayCall.count({ where: { deviceHash: hash, at: { gt: new Date(at.getTime() - 60_000) } } });
  await db().gatewayCall.createMany({ data: Array.from({ length: 60 - (QUOTA_RESERVE.minute - 1) - inWindow }, () => ({ deviceHash: hash, class: "general", at })) });
  expect(await readsBy(async () => refreshIfDue(stack().services, await pageAt(due)))).toBe(0);
  // The minute over, the same page reads.
  await db().gatewayCall.updateMany({ where: { deviceHash: hash }, data: { at: new Date(at.getTime() - 61_000) } });
  expect(await readsBy(async () => refreshIfDue(stack().services, await pageAt(due)))).toBe(1);
});

it("between its quiet reads, a page reads the order once notified of it by the order's own gateway, not by the other one", async () => {
  const pageAt = await paymentOnThePage();
  const recently = { lastCheckedAt: new Date(Date.now() - 20_000), expiresAt: new Date(Date.now() + 10 * 60_000) };
  const payment = await pageAt(recently);
  expect(payment.gatewayEnv).toBe("sandbox");
  // Read 20 s ago, nothing notified since: no read before the quiet interval.
  expect(await readsBy(async () => refreshIfDue(stack().services, await pageAt(recently)))).toBe(0);
  // A notification of the same order id from the live gateway is not about this order.
  await notified(payment.gatewayOrderId!, "live", "AC");
  expect(await readsBy(async () => refreshIfDue(stack().services, await pageAt(recently)))).toBe(0);
  // From the sandbox, it is: read.
  await notified(payment.gatewayOrderId!, "sandbox", "AC");
  expect(await readsBy(async () => refreshIfDue(stack().services, await pageAt(recently)))).toBe(1);
});

it("a page read the gateway fails leaves the order unread for the reconciler, and the page's reads stay spaced all the same", async () => {
  const pageAt = await paymentOnThePage();
  const lastAnswer = new Date(Date.now() - 20 * 60_000);
  await stack().sandboxControl("/sandbox/faults", { endpoint: "orders.info", kind: "http_500", count: 100 });
  try {
    const page = await pageAt({ lastCheckedAt: lastAnswer, expiresAt: new Date(Date.now() + 10 * 60_000) });
    expect(await readsBy(() => refreshIfDue(stack().services, page))).toBe(1);
    const after = await db().payment.findUniqueOrThrow({ where: { id: page.id } });
    // The failed read moved nothing the reconciler goes by: the order is still due for its read.
    expect(after.lastCheckedAt).toEqual(lastAnswer);
    expect(isDue(after, new Date())).toBe(true);
    // The page itself does not ask again within its spacing, however often it polls.
    expect(after.readClaimedAt).not.toBeNull();
    expect(await readsBy(async () => refreshIfDue(stack().services, await pageAt({ lastCheckedAt: lastAnswer, readClaimedAt: after.readClaimedAt })))).toBe(0);
    // A quiet page's interval after its failed read, it tries again.
    const later = await pageAt({ lastCheckedAt: lastAnswer, readClaimedAt: new Date(Date.now() - REFRESH_QUIET_MS - 1_000) });
    expect(await readsBy(() => refreshIfDue(stack().services, later))).toBe(1);
  } finally {
    await stack().sandboxControl("/sandbox/faults", undefined, "DELETE");
  }
});
