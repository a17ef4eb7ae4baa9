// A shop with hundreds of open payments while every webhook is lost, and the reconciler's
// listing of the shop's orders does not show them:
// - they are open on the merchant's earlier device (the merchant connected another device of
//   the same gateway account): the current device's listing shows none of those orders, and
//   the app holds the earlier device's credentials (retired, kept for these payments);
// - the gateway's listing (GET /orders/, no pagination) fails for days (500), while each order
//   can still be read by its identifier.
// Every order must be read before Shopify's window closes: a shopper who paid must not be
// rejected unread at its end. Real stack: the gateway sandbox over HTTP (its injected faults),
// the Shopify stand-in's shop, SQLite.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { FINALISE_UNREAD_AFTER_MS, reconcileOnce } from "../../app/payments/reconcile";
import { paymentColumns } from "../support/payment-rows";
import { shopSandboxClient } from "../support/shop-gateway";
import { connectAnotherSandboxDevice, movingClock, setWebhookFaults, stackForFile, type Stack } from "../support/stack";

const OPEN = 400;
const PAID = 10;

const cases: { name: string; listingMisses: (stack: Stack) => Promise<void> }[] = [
  {
    name: "open on the merchant's earlier device",
    listingMisses: async (stack) => {
      await connectAnotherSandboxDevice(stack);
      const shop = await stack.services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
      expect(shop.sandboxRetiredDeviceKeyEnc).not.toBeNull();
    },
  },
  {
    name: "while the listing fails",
    // The listing fails from now on, whatever the range.
    listingMisses: (stack) => stack.sandboxControl("/sandbox/faults", { endpoint: "orders.list", kind: "http_500", count: 1_000_000 }).then(() => undefined),
  },
];

describe.each(cases)("hundreds of payments $name", ({ listingMisses }) => {
  const time = movingClock(() => stack());
  const stack = stackForFile({ workers: false, clock: time.clock, gatewayRetry: { baseDelayMs: 1, maxDelayMs: 2 } });
  const db = () => stack().services.db;
  const act = (orderId: string, body: Record<string, string>) => stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, body);

  it("are every one read before Shopify's window closes, however many there are", async () => {
    await setWebhookFaults(stack(), "drop");
    const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
    // The stack's sandbox is not throttled; the orders are made at once, as over hours.
    const { client: gateway } = await shopSandboxClient(stack(), stack().shopDomain, time.clock);
    const payments: { id: string; orderId: string }[] = [];
    for (let i = 0; i < OPEN; i++) {
      const order = await gateway.createOrder({ expected_output_amount: "49.90", input_currency: "BTC", fiat: "EUR", reference: randomUUID() });
      if (order.isErr()) throw order.error;
      const row = await db().payment.create({
        data: paymentColumns(shop.id, { gatewayOrderId: order.value.identifier, gatewayStatus: "PE", createdAt: new Date(time.clock.now().getTime() + i) }),
      });
      payments.push({ id: row.id, orderId: order.value.identifier });
    }
    // The shoppers of the last few paid in full; their webhooks were lost.
    const paid = payments.slice(-PAID);
    for (const p of paid) {
      await act(p.orderId, { action: "pay", amount: "exact" });
      await act(p.orderId, { action: "confirm" });
    }
    await listingMisses(stack());

    // The reconciler runs every minute; a pass every ten minutes of the app's clock is enough here
    // (the listings are spaced by an hour, or ten minutes near the window's end).
    const end = time.clock.now().getTime() + FINALISE_UNREAD_AFTER_MS + 30 * 60_000;
    while (time.clock.now().getTime() < end) {
      await time.advance(10 * 60_000);
      await reconcileOnce(stack().services, { worker: "reconciler" });
    }
    const rows = await db().payment.findMany({ where: { id: { in: payments.map((p) => p.id) } } });
    // The shoppers who paid are resolved, not rejected unread.
    const paidRows = rows.filter((r) => paid.some((p) => p.id === r.id));
    expect(paidRows.map((r) => r.state)).toEqual(paid.map(() => "paid"));
    expect(rows.filter((r) => r.state === "awaiting_payment" || r.state === "confirming")).toEqual([]);
    // Nothing finalised unread: every order was read.
    expect(rows.filter((r) => r.attention === "pending_window_expired").length).toBe(0);
  }, 600_000);
});
