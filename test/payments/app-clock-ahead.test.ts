// Days passing on the app's clock (a simulated clock, as the tests and benchmarks move it):
// - a "pending" call Shopify could not take for longer than its window (a refused token or
//   permission the merchant must mend) is not sent late, with its expiry in the past: Shopify
//   would refuse it, and that refusal would replace the payment's open pending_window_expired
//   flag (the shopper may have paid) with a Shopify error, marked handled by the reject after;
// - an order creation whose answer was lost is looked up over dates from the app's clock, as
//   every other listing is, so the order the gateway made is found and adopted even when the
//   app's clock runs days ahead of the machine's.
import { expect, it } from "vitest";
import { deliverDueMessages } from "../../app/payments/outbox";
import { reconcileOnce } from "../../app/payments/reconcile";
import { movingClock, paymentThrough, stackForFile } from "../support/stack";
import { createOrderWithCurrency } from "../../app/payments/start-payment-session";
import { credentialContext } from "../../app/shops/shop-credentials.server";

const time = movingClock(() => stack());
const stack = stackForFile({ workers: false, clock: time.clock });

it("a pending call that could not be sent within Shopify's window does not erase the payment's pending_window_expired flag once Shopify is reachable again", async () => {
  const { services, standin } = stack();
  const db = services.db;
  // The shopper paid the exact amount; the gateway waits for its confirmation (AC).
  const { session, payment } = await paymentThrough(stack(), [
    { action: "choose_currency", currency: "ETH" },
    { action: "pay", amount: "exact" },
  ]);

  // Shopify refuses the shop's calls (a permission the merchant must grant, a token to renew).
  standin.state.setFault({ mode: "http_403", count: 1000 });
  try {
    // The shopper is sent back to wait: the app queues "pending" (expiry now + 71 h), which
    // Shopify refuses for now.
    const back = await fetch(services.links.returnUrl(payment, "standby"), { redirect: "manual" });
    await back.text();
    const pending = await db.outboxMessage.findFirstOrThrow({ where: { paymentId: payment.id, kind: "payment.pending" } });
    expect(pending.status).toBe("pending");

    // Three days on, the payment is still open at the gateway: the reconciler ends it before
    // Shopify's window closes and flags it for the merchant.
    await time.advance(72 * 3_600_000);
    await reconcileOnce(services, { worker: "clock-ahead" });
    const finalised = await db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(finalised).toMatchObject({ state: "failed", attention: "pending_window_expired", attentionResolvedAt: null });
  } finally {
    standin.state.clearFaults();
  }

  // The merchant mends the cause: the queued calls go out.
  for (let pass = 0; pass < 5; pass++) await deliverDueMessages(services, { worker: "clock-ahead" });
  expect(standin.state.session(session.id)?.state.code).toBe("REJECTED");

  const after = await db.payment.findUniqueOrThrow({ where: { id: payment.id } });
  const refused = await db.outboxMessage.findMany({ where: { paymentId: payment.id, status: "failed" }, select: { kind: true, lastError: true } });
  expect({ attention: after.attention, flagOpen: after.attentionResolvedAt === null, refusedCalls: refused }).toEqual({
    attention: "pending_window_expired",
    flagOpen: true,
    refusedCalls: [],
  });
}, 60_000);

it("a coin pick whose creation answer was lost adopts the gateway's order when the app's clock runs days ahead of the machine's", async () => {
  const { services, standin, shopDomain } = stack();
  const db = services.db;
  // The app (and the gateway sandbox with it) three days on, as a simulated clock moves them.
  await time.advance(3 * 24 * 3_600_000);
  await db.shop.update({ where: { shopDomain }, data: { checkoutMode: "app_page" } });
  const { session, delivery } = await standin.state.startPayment({ test: true, locale: "en", amount: "25.00", currency: "EUR" });
  expect(delivery.status, delivery.body).toBe(200);
  const payment = await db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });

  // The gateway makes the BTC order, but its answer is lost (a 500 after the creation).
  await stack().sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_500", count: 1, after_create: true });
  let picked: Awaited<ReturnType<typeof createOrderWithCurrency>>;
  try {
    picked = await createOrderWithCurrency(services, payment.id, "BTC");
  } finally {
    await stack().sandboxControl("/sandbox/faults", undefined, "DELETE");
  }

  // The gateway holds exactly one order for this session.
  const shop = await db.shop.findUniqueOrThrow({ where: { shopDomain } });
  const key = services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"));
  const start = new Date(time.clock.now().getTime() - 86_400_000).toISOString().slice(0, 10).replace(/-/g, "/");
  const listed = (await (await fetch(`${stack().sandbox.baseUrl}/orders/?start=${start}`, { headers: { "X-Device-Id": key } })).json()) as { reference: string | null }[];
  expect(listed.filter((order) => order.reference === session.id)).toHaveLength(1);

  // The lookup by reference finds it: the payment takes it, and the shopper can pay.
  expect(picked).toMatchObject({ ok: true, payment: { inputCurrency: "BTC", state: "awaiting_payment" } });
}, 60_000);
