// Signed final webhooks settle open payments without a gateway call; the reconciler's next
// listing of the shop's orders verifies them and flags any disagreement; anything
// inconsistent is read back first; listings of one shop's orders are spaced. A read of an
// older version of the order changes nothing; a webhook repeating a settled status is read
// only when it reports a version of the order the app has not seen.
import { expect, it } from "vitest";
import { hashDeviceKey } from "../../app/gateway/quota";
import { deliverDueMessages } from "../../app/payments/outbox";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import { settleFromGatewayOrder, settleFromSignedWebhook } from "../../app/payments/settle-payment";
import { parseGatewayStatus } from "../../app/gateway/statuses";
import { LIST_SPACING_MS, reconcileOnce, VERIFY_WITHIN_MS } from "../../app/payments/reconcile";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { sendGatewayWebhook, stackForFile, waitFor } from "../support/stack";

let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };

const stack = stackForFile({ workers: false, clock, gatewayLimits: "spec" });

const db = () => stack().services.db;
const act = (orderId: string, body: Record<string, string>) => stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, body);

async function shopRow() {
  return db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
}

async function gatewayCalls(): Promise<number> {
  const shop = await shopRow();
  const hash = hashDeviceKey(stack().services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key")));
  return db().gatewayCall.count({ where: { deviceHash: hash } });
}

/** A payment whose gateway order waits for the shopper's coins (PE). */
async function pendingPayment() {
  const { session } = await stack().standin.state.startPayment({ test: true, amount: "25.50", currency: "EUR" });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  await act(payment.gatewayOrderId!, { action: "choose_currency", currency: "BTC" });
  return { session, payment, orderId: payment.gatewayOrderId! };
}

/** Posts a webhook signed with the shop's own sandbox Secret Key, as the gateway would. */
async function postSignedWebhook(body: string): Promise<number> {
  const shop = await shopRow();
  return sendGatewayWebhook(stack(), stack().services.cipher.decrypt(shop.sandboxSecretKeyEnc!, credentialContext(shop.id, "sandbox", "secret-key")), body, clock.now());
}

/** The order as the gateway shows it now, read the way the app reads it, and when the read was asked for. */
async function readOrder(orderId: string) {
  const readAt = clock.now();
  const access = stack().services.gateways.forShop(await shopRow(), "sandbox")!;
  return { order: (await access.client.orderInfo(orderId))._unsafeUnwrap(), readAt };
}

/**
 * Posts again the webhook the sandbox sent for the order's status, signed now: the sandbox
 * signs with its own clock, which the tests' clock has moved away from.
 */
async function redeliver(orderId: string, status: string): Promise<string> {
  const body = await waitFor(async () => {
    const deliveries = (await stack().sandboxControl(`/sandbox/webhooks/deliveries?order=${orderId}`, undefined, "GET")) as { status: string; body: string }[];
    return deliveries.find((d) => d.status === status)?.body;
  }, `the sandbox's ${status} webhook`);
  expect(await postSignedWebhook(body)).toBe(200);
  return body;
}

async function drainInbox(): Promise<void> {
  await processWebhookInbox(stack().services, { worker: "t" });
  expect(await db().gatewayWebhook.count({ where: { processedAt: null, nextAttemptAt: { lte: clock.now() } } })).toBe(0);
}

/** A payment paid exactly and confirmed on the gateway, its CO webhook stored and processed; `before`: the gateway calls counted before the processing. */
async function paidAndProcessed() {
  const { session, payment, orderId } = await pendingPayment();
  await act(orderId, { action: "pay", amount: "exact" });
  await act(orderId, { action: "confirm" });
  await waitFor(async () => (await db().gatewayWebhook.count({ where: { orderId, status: "CO" } })) > 0, "the CO webhook stored");
  const before = await gatewayCalls();
  await drainInbox();
  return { session, payment, before };
}

/** Moves the clock past both the verification deadline and the listing spacing. */
function laterThanVerificationIsDue(): void {
  offsetMs += Math.max(VERIFY_WITHIN_MS, LIST_SPACING_MS) + 60_000;
}

it("a shop that asks for it has a signed completed webhook confirmed by one read of the order before Shopify is told", async () => {
  await db().shop.update({ where: { shopDomain: stack().shopDomain }, data: { readOrderOnWebhook: true } });
  try {
    const { session, payment, before } = await paidAndProcessed();

    const settled = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(settled).toMatchObject({ state: "paid", gatewayStatus: "CO", unverifiedSince: null });
    expect(await gatewayCalls()).toBe(before + 1);
    await deliverDueMessages(stack().services, { worker: "t" });
    expect(stack().standin.state.session(session.id)?.state.code).toBe("RESOLVED");
  } finally {
    await db().shop.update({ where: { shopDomain: stack().shopDomain }, data: { readOrderOnWebhook: false } });
  }
});

it("the gateway's own completed webhook settles the payment with no gateway call, and the next listing verifies it", async () => {
  const { session, payment, before } = await paidAndProcessed();

  const settled = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(settled.state).toBe("paid");
  expect(settled.gatewayStatus).toBe("CO");
  expect(settled.unverifiedSince).not.toBeNull();
  // The shopper chose the coin on the gateway's page: the webhook's report of it is shown until the listing reads the order.
  expect(payment.inputCurrency).toBeNull();
  expect(settled.inputCurrency).toBe("BTC");
  expect(settled.cryptoAmount).toMatch(/^0\.\d+$/);
  expect(await gatewayCalls()).toBe(before);
  await deliverDueMessages(stack().services, { worker: "t" });
  expect(stack().standin.state.session(session.id)?.state.code).toBe("RESOLVED");

  laterThanVerificationIsDue();
  const summary = await reconcileOnce(stack().services, { worker: "t" });
  expect(summary.gatewayCalls).toBe(1);
  expect(summary.verified).toBe(1);
  const verified = await db().payment.findUniqueOrThrow({ where: { id: payment.id }, include: { events: true, transactions: true } });
  expect(verified.unverifiedSince).toBeNull();
  expect(verified.attention).toBeNull();
  expect(verified.transactions.length).toBeGreaterThan(0);
  expect({ coin: verified.inputCurrency, amount: verified.cryptoAmount }).toEqual({ coin: settled.inputCurrency, amount: settled.cryptoAmount });
  expect(verified.events.map((e) => e.type)).toContain("verified");
  // Verified payments are not read again.
  laterThanVerificationIsDue();
  expect((await reconcileOnce(stack().services, { worker: "t" })).gatewayCalls).toBe(0);
});

it("a validly signed webhook that the gateway's record contradicts is flagged for a person at the next listing", async () => {
  const { payment, orderId } = await pendingPayment();
  expect(await postSignedWebhook(`{"fiat_amount": 25.5, "status": "CO", "identifier": "${orderId}"}`)).toBe(200);
  await drainInbox();
  expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).state).toBe("paid");

  laterThanVerificationIsDue();
  const summary = await reconcileOnce(stack().services, { worker: "t" });
  expect(summary.verified).toBe(1);
  const flagged = await db().payment.findUniqueOrThrow({ where: { id: payment.id }, include: { events: true } });
  expect(flagged.state).toBe("paid");
  expect(flagged.attention).toBe("webhook_mismatch");
  expect(flagged.attentionDetail).toContain("PE");
  expect(flagged.unverifiedSince).toBeNull();
  expect(flagged.events.filter((e) => e.type === "attention")).toHaveLength(1);
});

it.each([
  ["an amount other than the payment's", (id: string) => `{"fiat_amount": 1.0, "status": "CO", "identifier": "${id}"}`],
  ["another fiat", (id: string) => `{"fiat_amount": 25.5, "fiat_currency": "USD", "status": "CO", "identifier": "${id}"}`],
  ["no amount", (id: string) => `{"status": "CO", "identifier": "${id}"}`],
  ["a status that is not final", (id: string) => `{"fiat_amount": 25.5, "status": "AC", "identifier": "${id}"}`],
  ["an unknown status", (id: string) => `{"fiat_amount": 25.5, "status": "RF", "identifier": "${id}"}`],
])("a webhook with %s settles nothing by itself", async (_what, body) => {
  const { payment, orderId } = await pendingPayment();
  laterThanVerificationIsDue();
  const before = await gatewayCalls();
  expect(await postSignedWebhook(body(orderId))).toBe(200);
  await drainInbox();
  const after = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(after.state).toBe("awaiting_payment");
  expect(after.unverifiedSince).toBeNull();
  // Final-looking statuses are read back; "AC" needs nothing from Shopify and costs nothing.
  expect(await gatewayCalls()).toBe(before + (body(orderId).includes('"AC"') ? 0 : 1));
});

it("lists one shop's orders at most once per spacing interval, however many payments fall due", async () => {
  laterThanVerificationIsDue();
  await reconcileOnce(stack().services, { worker: "t" });
  await pendingPayment();
  offsetMs += LIST_SPACING_MS;
  expect((await reconcileOnce(stack().services, { worker: "t" })).gatewayCalls).toBe(1);
  await pendingPayment();
  offsetMs += 16 * 60_000;
  expect((await reconcileOnce(stack().services, { worker: "t" })).gatewayCalls).toBe(0);
  offsetMs += LIST_SPACING_MS - 16 * 60_000;
  expect((await reconcileOnce(stack().services, { worker: "t" })).gatewayCalls).toBe(1);
});

it("a signed webhook settles from the row its batch read, and decides again from a fresh read when that row changed since", async () => {
  const { payment, orderId } = await pendingPayment();
  const seen = { payment: await db().payment.findUniqueOrThrow({ where: { id: payment.id } }), shopDomain: stack().shopDomain };
  // Another writer moves the payment after the batch read it (a shopper's return reading AC).
  await db().payment.update({ where: { id: payment.id }, data: { gatewayStatus: "AC" } });
  const completed = parseGatewayStatus("CO");
  if (!completed.known) throw new Error("CO is a known status");

  const settled = await settleFromSignedWebhook(stack().services, seen, { identifier: orderId, status: completed });
  expect(settled?.payment.state).toBe("paid");
  expect(settled?.finalMessage).not.toBeNull();
  const statusEvents = await db().paymentEvent.findMany({ where: { paymentId: payment.id, type: "gateway_status" }, orderBy: [{ at: "asc" }, { id: "asc" }] });
  // Decided from the fresh row: the status moved from AC, as the row had it, not from the batch's PE.
  expect(JSON.parse(statusEvents.at(-1)!.detail)).toMatchObject({ from: "AC", to: "CO", source: "signed_webhook" });
  expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toEqual(settled!.payment);

  // The same stale row again: the payment is final now, so nothing more is stored.
  expect(await settleFromSignedWebhook(stack().services, seen, { identifier: orderId, status: completed })).toBeNull();
  expect(await db().outboxMessage.count({ where: { paymentId: payment.id } })).toBe(1);
});

it("a read the order's final webhook overtook changes nothing: the payment stays paid and unverified, with no flag, event or lost confirmation", async () => {
  const { payment, orderId } = await pendingPayment();
  await act(orderId, { action: "pay", amount: "exact" });
  // The shopper's return reads the order (AC) ...
  const returnRead = await readOrder(orderId);
  expect(returnRead.order.status.code).toBe("AC");
  // ... while the gateway completes it and its CO webhook is settled.
  await act(orderId, { action: "confirm" });
  await redeliver(orderId, "CO");
  await drainInbox();
  const settled = await db().payment.findUniqueOrThrow({ where: { id: payment.id }, include: { events: true } });
  expect(settled).toMatchObject({ state: "paid", gatewayStatus: "CO" });
  expect(settled.unverifiedSince).not.toBeNull();

  // Then the return settles from its AC read.
  const result = await settleFromGatewayOrder(stack().services, payment.id, returnRead.order, "return", returnRead.readAt);
  expect(result.finalMessage).toBeNull();
  const after = await db().payment.findUniqueOrThrow({ where: { id: payment.id }, include: { events: true } });
  expect(after).toEqual(settled);
  expect(after.attention).toBeNull();
  expect(after.unverifiedSince).toEqual(settled.unverifiedSince);

  // The listing verifies it and stores its confirmed transaction; the old read still changes nothing.
  laterThanVerificationIsDue();
  await reconcileOnce(stack().services, { worker: "t" });
  const verified = await db().payment.findUniqueOrThrow({ where: { id: payment.id }, include: { events: true, transactions: true } });
  expect(verified.unverifiedSince).toBeNull();
  expect(verified.transactions.length).toBeGreaterThan(0);
  expect(verified.transactions.every((t) => t.confirmed)).toBe(true);
  await settleFromGatewayOrder(stack().services, payment.id, returnRead.order, "reconcile", clock.now());
  expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id }, include: { events: true, transactions: true } })).toEqual(verified);
  expect(await db().outboxMessage.count({ where: { paymentId: payment.id } })).toBe(1);
});

it("a signed webhook's final status that the gateway's record shows as another final status is flagged", async () => {
  const { payment, orderId } = await pendingPayment();
  expect(await postSignedWebhook(`{"fiat_amount": 25.5, "status": "CO", "identifier": "${orderId}"}`)).toBe(200);
  await drainInbox();
  // The gateway's own record ends as EX; even a read asked for before the webhook was acted on contradicts a CO.
  const readAt = new Date(clock.now().getTime() - 60_000);
  await act(orderId, { action: "expire" });
  const { order } = await readOrder(orderId);
  expect(order.status.code).toBe("EX");
  await settleFromGatewayOrder(stack().services, payment.id, order, "return", readAt);

  const flagged = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(flagged).toMatchObject({ state: "paid", gatewayStatus: "EX", attention: "webhook_mismatch", unverifiedSince: null });
  expect(flagged.attentionDetail).toContain("EX");
});

it("crypto paid after EX: a webhook with the settled status and a new edited_at is read and flags a late payment; its repeat costs no call", async () => {
  const { session, payment, orderId } = await pendingPayment();
  await act(orderId, { action: "expire" });
  const expired = await redeliver(orderId, "EX");
  await drainInbox();
  expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).state).toBe("failed");
  await deliverDueMessages(stack().services, { worker: "t" });
  expect(stack().standin.state.session(session.id)?.state.code).toBe("REJECTED");

  // The same EX webhook again (the gateway does not deduplicate): a repeat of one processed, no read.
  let before = await gatewayCalls();
  offsetMs += 1_000;
  expect(await postSignedWebhook(expired)).toBe(200);
  expect(await processWebhookInbox(stack().services, { worker: "t" })).toMatchObject({ duplicates: 1, processed: 0 });
  expect(await gatewayCalls()).toBe(before);

  // The shopper pays late: the gateway keeps EX and records the transaction, with a new edited_at.
  await act(orderId, { action: "pay", amount: "exact" });
  const late = JSON.stringify({ ...JSON.parse(expired), edited_at: (await readOrder(orderId)).order.edited_at });
  before = await gatewayCalls();
  offsetMs += 1_000;
  expect(await postSignedWebhook(late)).toBe(200);
  expect(await processWebhookInbox(stack().services, { worker: "t" })).toMatchObject({ duplicates: 0, processed: 1 });
  expect(await gatewayCalls()).toBe(before + 1);
  const flagged = await db().payment.findUniqueOrThrow({ where: { id: payment.id }, include: { transactions: true } });
  expect(flagged).toMatchObject({ state: "failed", gatewayStatus: "EX", attention: "late_payment" });
  expect(flagged.transactions).toHaveLength(1);

  // The same webhook once more: a version of the order the app has read, no read.
  offsetMs += 1_000;
  expect(await postSignedWebhook(late)).toBe(200);
  expect(await processWebhookInbox(stack().services, { worker: "t" })).toMatchObject({ duplicates: 1, processed: 0 });
  expect(await gatewayCalls()).toBe(before + 1);
  expect(await db().outboxMessage.count({ where: { paymentId: payment.id } })).toBe(1);
});

it("webhooks that carry no edited_at are told apart by their amounts: a repeat costs no call, crypto paid after EX is read and flagged", async () => {
  const { payment, orderId } = await pendingPayment();
  await act(orderId, { action: "expire" });
  // Signed a second later than the sandbox's own delivery, which the door would take as a replay.
  offsetMs += 1_000;
  const expired = JSON.parse(await redeliver(orderId, "EX")) as Record<string, unknown>;
  await drainInbox();
  expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).state).toBe("failed");
  const withoutEditedAt = (body: Record<string, unknown>) => JSON.stringify(Object.fromEntries(Object.entries(body).filter(([field]) => field !== "edited_at")));

  // The EX webhook as an older version of the gateway sends it: read once, then a repeat.
  const before = await gatewayCalls();
  offsetMs += 1_000;
  expect(await postSignedWebhook(withoutEditedAt(expired))).toBe(200);
  expect(await processWebhookInbox(stack().services, { worker: "t" })).toMatchObject({ processed: 1 });
  offsetMs += 1_000;
  expect(await postSignedWebhook(withoutEditedAt(expired))).toBe(200);
  expect(await processWebhookInbox(stack().services, { worker: "t" })).toMatchObject({ duplicates: 1, processed: 0 });
  expect(await gatewayCalls()).toBe(before + 1);
  expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).attention).toBeNull();

  // The shopper pays late: the same status, with the amount now seen.
  await act(orderId, { action: "pay", amount: "exact" });
  const { order } = await readOrder(orderId);
  offsetMs += 1_000;
  expect(await postSignedWebhook(withoutEditedAt({ ...expired, unconfirmed_amount: Number(order.unconfirmed_amount) }))).toBe(200);
  expect(await processWebhookInbox(stack().services, { worker: "t" })).toMatchObject({ duplicates: 0, processed: 1 });
  expect(await gatewayCalls()).toBe(before + 3);
  expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ state: "failed", gatewayStatus: "EX", attention: "late_payment" });
});

it("a webhook whose order the gateway's read does not return is processed with a note, and its repeat is read again, not dropped", async () => {
  // A paid payment whose order this device's reads cannot return (made through an earlier device).
  const elsewhere = "9a3c1f0e-5b7d-4e2a-8c6f-1d2e3f4a5b6c";
  const payment = await db().payment.create({
    data: {
      shopId: (await shopRow()).id,
      shopifyPaymentId: "earlier-device-payment",
      gid: "gid://shopify/PaymentSession/earlier-device-payment",
      groupId: "earlier-device-group",
      amount: "25.50",
      currency: "EUR",
      test: true,
      kind: "sale",
      cancelUrl: "https://shop.example/cancel",
      gatewayEnv: "sandbox",
      state: "paid",
      gatewayOrderId: elsewhere,
      gatewayStatus: "CO",
      gatewayEditedAt: clock.now(),
    },
  });
  const news = JSON.stringify({ identifier: elsewhere, status: "CO", fiat_amount: 25.5, fiat_currency: "EUR", edited_at: new Date(clock.now().getTime() + 60_000).toISOString() });
  for (const round of [1, 2]) {
    offsetMs += 1_000;
    expect(await postSignedWebhook(news)).toBe(200);
    expect(await processWebhookInbox(stack().services, { worker: "t" }), `round ${round}`).toMatchObject({ processed: 1, duplicates: 0 });
  }
  const hooks = await db().gatewayWebhook.findMany({ where: { orderId: elsewhere } });
  expect(hooks.map((h) => h.lastError)).toEqual(["the gateway's read did not return this order", "the gateway's read did not return this order"]);
  expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).state).toBe("paid");
});
