// The gateway's notification that money arrived (AC) asks nothing of Shopify, so the inbox
// takes it in without reading the order and the payment stays "awaiting payment": only the
// payment page's own read (refreshIfDue) shows the shopper that their money arrived. That read
// does not happen while the device's quota is down to the reserve kept for new orders (a busy
// shop), nor while the gateway's order reads fail. The page must not then go on asking the
// shopper who just paid to pay (QR code, amount, address, countdown): a shopper told their
// money did not arrive pays again. The app holds the verified notification: the return link
// already counts it (handle-return's heldState); the page must too.
import { beforeAll, describe, expect, it } from "vitest";
import { hashDeviceKey } from "../../app/gateway/quota";
import { QUOTA_RESERVE } from "../../app/payments/reconcile";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { coinPickedOnAppPage, stackForFile, waitFor } from "../support/stack";

const stack = stackForFile({ gatewayLimits: "spec" });
const db = () => stack().services.db;

beforeAll(async () => {
  await db().shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

async function deviceHash(): Promise<string> {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  return hashDeviceKey(stack().services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key")));
}

/** A shopper on the app's page who picked ETH and sent `amount`; the AC notification stored. */
async function paidOnThePage(amount: "exact" | "less") {
  const { pageUrl, payment } = await coinPickedOnAppPage(stack(), { locale: "en", amount: "30.00", currency: "EUR" });
  const orderId = payment.gatewayOrderId!;
  await stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, { action: "pay", amount });
  await waitFor(async () => (await db().gatewayWebhook.count({ where: { orderId, status: "AC", processedAt: { not: null } } })) > 0 || null, "the AC notification taken in");
  // The page's last read was its first, 20 s ago: a read is due (every 15 s at most).
  await db().payment.update({ where: { id: payment.id }, data: { lastCheckedAt: new Date(Date.now() - 20_000) } });
  const page = new URL(pageUrl);
  const statusUrl = `${page.origin}${page.pathname}/status${page.search}`;
  return { payment, pageUrl, statusUrl };
}

async function spendQuotaDownToReserve() {
  const hash = await deviceHash();
  const at = new Date();
  const inWindow = await db().gatewayCall.count({ where: { deviceHash: hash, at: { gt: new Date(at.getTime() - 60_000) } } });
  const spend = 60 - (QUOTA_RESERVE.minute - 1) - inWindow;
  if (spend > 0) await db().gatewayCall.createMany({ data: Array.from({ length: spend }, () => ({ deviceHash: hash, class: "general", at })) });
  return async () => void (await db().gatewayCall.deleteMany({ where: { deviceHash: hash, at } }));
}

async function failOrderReads() {
  await stack().sandboxControl("/sandbox/faults", { endpoint: "orders.info", kind: "http_500", count: 50 });
  return async () => void (await stack().sandboxControl("/sandbox/faults", undefined, "DELETE"));
}

describe.each([
  ["the device's quota is down to the reserve for new orders", spendQuotaDownToReserve],
  ["the gateway's order reads fail", failOrderReads],
])("while %s", (_why, unreadable) => {
  it.each(["exact", "less"] as const)("a shopper who sent money (%s) is not asked to pay again", async (amount) => {
    const { payment, pageUrl, statusUrl } = await paidOnThePage(amount);
    const restore = await unreadable();
    try {
      const status = (await (await fetch(statusUrl)).json()) as { status: string };
      const html = await (await fetch(pageUrl)).text();
      const stored = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
      // The order was not read: the payment still says what it said before the money came.
      expect(stored.state).toBe("awaiting_payment");
      // Yet the page must not say "waiting for your payment", nor show what to send.
      expect(status.status).not.toBe("waiting");
      expect(html).not.toContain('<figure class="qr"');
      expect(html).not.toContain('id="amount"');
    } finally {
      await restore();
    }
  }, 60_000);
});
