// The reconciler: one gateway call per device per cycle, whatever the number of open
// payments; quota reserve kept for new orders; payments still open near the end of
// Shopify's pending window are finalised and flagged, even when the gateway cannot be read
// then; orders of the merchant's previous device are read one by one; shops are
// reconciled a few at a time.
import { expect, it } from "vitest";
import { signWebhook } from "../../app/gateway/webhook-signature";
import { hashDeviceKey } from "../../app/gateway/quota";
import { deliverDueMessages } from "../../app/payments/outbox";
import { isOpenPaymentState } from "../../app/payments/payment-state";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import { CLOSING_LIST_SPACING_MS, FINALISE_AFTER_MS, FINALISE_UNREAD_AFTER_MS, isDue, LATE_PAYMENT_RECHECK_MS, LIST_SPACING_MS, QUOTA_RESERVE, reconcileOnce } from "../../app/payments/reconcile";
import { LATE_PAYMENT_WATCH_MS } from "../../app/payments/payment-state";
import { createServices } from "../../app/services.server";
import { connectSandbox } from "../../app/shops/onboarding.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { paymentColumns } from "../support/payment-rows";
import { connectAnotherSandboxDevice, movingClock, stackForFile, waitFor } from "../support/stack";

const time = movingClock(() => stack());
const clock = time.clock;

// Several tests fail the gateway on purpose: the client's retries are kept, with short waits.
const stack = stackForFile({ workers: false, clock, gatewayLimits: "spec", gatewayRetry: { baseDelayMs: 5, maxDelayMs: 20 } });

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
  time.advanceAppOnly(16 * 60_000);
  const summary = await reconcileOnce(stack().services, { worker: "t" });
  expect(summary.gatewayCalls).toBe(1);
  expect(await db().gatewayCall.count({ where: { deviceHash: hash } })).toBe(before + 1);
  expect(await db().payment.count({ where: { state: "confirming" } })).toBe(2);
});

it("keeps a reserve of the quota for new orders", async () => {
  const hash = await deviceHash();
  time.advanceAppOnly(LIST_SPACING_MS);
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
  time.advanceAppOnly(71 * 3_600_000);
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

// From here on the gateway sandbox's clock follows the app's, so that its listings and
// expiries date orders as the app does.

const act = (orderId: string, body: Record<string, string>) => stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, body);

async function shopRow() {
  return db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
}

function sandboxDeviceKey(shop: Awaited<ReturnType<typeof shopRow>>): string {
  return stack().services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"));
}

/** Moves the app's clock and the gateway sandbox's together. */
const advance = (ms: number) => time.advance(ms);

function rejectCalls(sessionId: string) {
  return stack().standin.state.operationsFor(sessionId).filter((o) => o.status === 200 && (o.query ?? "").includes("paymentSessionReject"));
}

/** Rejected in Shopify exactly once, and flagged for the merchant as finalised without a gateway read. */
async function expectFinalisedUnread(sessionId: string, paymentId: string, cause: string): Promise<void> {
  const after = await db().payment.findUniqueOrThrow({ where: { id: paymentId }, include: { events: true } });
  expect(after.state).toBe("failed");
  expect(after.attention).toBe("pending_window_expired");
  expect(after.attentionDetail).toContain("could not be read");
  expect(after.attentionDetail).toContain(cause);
  expect(after.events.filter((e) => e.type === "attention")).toHaveLength(1);
  await waitFor(async () => {
    await deliverDueMessages(stack().services, { worker: "t" });
    return stack().standin.state.session(sessionId)?.state.code === "REJECTED";
  }, "the reject delivered");
  await deliverDueMessages(stack().services, { worker: "t" });
  expect(await db().outboxMessage.count({ where: { paymentId, kind: { in: ["payment.reject", "payment.resolve"] } } })).toBe(1);
  expect(rejectCalls(sessionId)).toHaveLength(1);
}

it.each([
  ["were removed by the merchant", "no gateway credentials", (_shop: Awaited<ReturnType<typeof shopRow>>) => ({ sandboxDeviceKeyEnc: null, sandboxSecretKeyEnc: null, sandboxDeviceKeyHint: null })],
  [
    "can no longer be decrypted",
    "could not be decrypted",
    // Sealed for another shop: the stored value fails authentication, as after a lost key.
    (shop: Awaited<ReturnType<typeof shopRow>>) => ({ sandboxDeviceKeyEnc: stack().services.cipher.encrypt(sandboxDeviceKey(shop), credentialContext("another-shop", "sandbox", "device-key")) }),
  ],
])("finalises a payment open at the end of the pending window when the shop's gateway credentials %s", async (_what, cause, change) => {
  const { session, payment } = await openPayment(true);
  await advance(FINALISE_AFTER_MS + 60_000);
  const shop = await shopRow();
  await db().shop.update({ where: { id: shop.id }, data: change(shop) });
  try {
    const summary = await reconcileOnce(stack().services, { worker: "t" });
    expect(summary.gatewayCalls).toBe(0);
    expect(summary.finalised).toBe(1);
    // A later cycle finds nothing more to do.
    await advance(60_000);
    expect((await reconcileOnce(stack().services, { worker: "t" })).finalised).toBe(0);
  } finally {
    const { sandboxDeviceKeyEnc, sandboxSecretKeyEnc, sandboxDeviceKeyHint } = shop;
    await db().shop.update({ where: { id: shop.id }, data: { sandboxDeviceKeyEnc, sandboxSecretKeyEnc, sandboxDeviceKeyHint } });
  }
  await expectFinalisedUnread(session.id, payment.id, cause);
});

it.each([
  [
    "refuses the device (403)",
    "(403)",
    // The listing alone: an order looked up with the refused key would be refused too.
    1,
    async () => {
      const key = sandboxDeviceKey(await shopRow());
      await stack().sandboxControl(`/sandbox/devices/${key}/settings`, { enabled: false });
      return async () => void (await stack().sandboxControl(`/sandbox/devices/${key}/settings`, { enabled: true }));
    },
  ],
  [
    "fails (500)",
    "(500)",
    // The listing, then the most urgent order by itself, which fails too: the rest wait.
    2,
    async () => {
      // Both reads: the listing, and GET /orders/info once a single order is left to read.
      for (const endpoint of ["orders.list", "orders.info"]) await stack().sandboxControl("/sandbox/faults", { endpoint, kind: "http_500", count: 100 });
      return async () => void (await stack().sandboxControl("/sandbox/faults", undefined, "DELETE"));
    },
  ],
])(
  "finalises payments at the end of the pending window when the gateway %s, and asks it again only after a pause",
  async (_what, cause, callsPerRead, breakGateway) => {
    const first = await openPayment(true);
    await advance(2 * 60_000);
    const second = await openPayment(true);
    // The first is just past the finalise point, the second reaches it two minutes later.
    await advance(FINALISE_AFTER_MS - 2 * 60_000 + 30_000);
    const repair = await breakGateway();
    try {
      // One failed read rejects nothing: there is time left to ask again.
      const failed = await reconcileOnce(stack().services, { worker: "t" });
      expect(failed.gatewayCalls).toBe(callsPerRead);
      expect(failed.finalised).toBe(0);

      // The reconciler's next cycles: the second is at the finalise point now, but the gateway
      // that just failed is not asked again at once.
      for (let cycle = 0; cycle < 3; cycle++) {
        await advance(60_000);
        expect((await reconcileOnce(stack().services, { worker: "t" })).gatewayCalls).toBe(0);
      }
      await advance(CLOSING_LIST_SPACING_MS);
      const again = await reconcileOnce(stack().services, { worker: "t" });
      expect(again).toMatchObject({ gatewayCalls: callsPerRead, finalised: 0 });
      for (const { payment } of [first, second]) expect(isOpenPaymentState((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).state)).toBe(true);

      // Still failing when the time to read them is up: both are finalised unread.
      await advance(FINALISE_UNREAD_AFTER_MS - FINALISE_AFTER_MS);
      const retried = await reconcileOnce(stack().services, { worker: "t" });
      expect(retried.gatewayCalls).toBe(callsPerRead);
      expect(retried.finalised).toBe(2);
    } finally {
      await repair();
    }
    await expectFinalisedUnread(first.session.id, first.payment.id, cause);
    await expectFinalisedUnread(second.session.id, second.payment.id, cause);
  },
  // Each failed read goes through the client's retries twice: the listing's, then one look-up's.
  60_000,
);

it("a read that fails at the finalise point is asked again: a payment completed with its webhook lost is resolved, not rejected", async () => {
  await advance(0);
  const { session, payment } = await openPayment(true);
  await stack().sandboxControl(`/sandbox/devices/${sandboxDeviceKey(await shopRow())}/webhook-faults`, { mode: "drop", count: 1 });
  await act(payment.gatewayOrderId!, { action: "confirm" });
  await advance(FINALISE_AFTER_MS + 30_000);
  for (const endpoint of ["orders.list", "orders.info"]) await stack().sandboxControl("/sandbox/faults", { endpoint, kind: "http_500", count: 100 });
  try {
    // The listing, then the order by itself, which fails too: nothing is finalised yet.
    expect(await reconcileOnce(stack().services, { worker: "t" })).toMatchObject({ gatewayCalls: 2, finalised: 0 });
  } finally {
    await stack().sandboxControl("/sandbox/faults", undefined, "DELETE");
  }
  await advance(CLOSING_LIST_SPACING_MS);
  expect(await reconcileOnce(stack().services, { worker: "t" })).toMatchObject({ gatewayCalls: 1, finalised: 0, settled: 1 });
  expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ state: "paid", attention: null });
  await waitFor(async () => {
    await deliverDueMessages(stack().services, { worker: "t" });
    return stack().standin.state.session(session.id)?.state.code === "RESOLVED";
  }, "the resolve delivered");
  expect(rejectCalls(session.id)).toHaveLength(0);
}, 60_000);

/** The merchant connects another device of the same gateway account: its orders are the only ones listed from then on. */
const connectAnotherDevice = () => connectAnotherSandboxDevice(stack());

/** Drops every webhook of the current device until the returned function is called. */
async function loseWebhooks(): Promise<() => Promise<void>> {
  const faults = `/sandbox/devices/${sandboxDeviceKey(await shopRow())}/webhook-faults`;
  await stack().sandboxControl(faults, { mode: "drop" });
  return async () => void (await stack().sandboxControl(faults, { mode: "deliver" }));
}

it("reads the orders of the merchant's previous device one by one: a paid one is resolved, a webhook-settled one verified", async () => {
  await advance(0);
  const open = await openPayment(true);
  const settled = await openPayment(true);
  const oldShop = await shopRow();
  const oldKey = sandboxDeviceKey(oldShop);
  // The second completes and its webhook reaches the app (sent again here with a fresh
  // nonce: the app's clock runs days ahead of the real one the sandbox signs with).
  await act(settled.payment.gatewayOrderId!, { action: "confirm" });
  const deliveries = await waitFor(async () => {
    const all = (await stack().sandboxControl(`/sandbox/webhooks/deliveries?order=${settled.payment.gatewayOrderId}`, undefined, "GET")) as { status: string; body: string }[];
    return all.some((d) => d.status === "CO") && all;
  }, "the CO webhook sent");
  const body = deliveries.find((d) => d.status === "CO")!.body;
  const secretHex = stack().services.cipher.decrypt(oldShop.sandboxSecretKeyEnc!, credentialContext(oldShop.id, "sandbox", "secret-key"));
  const nonce = String(Math.floor(clock.now().getTime() / 1000));
  const posted = await fetch(`${stack().app.url}/gateway/webhooks/${oldShop.webhookToken}`, {
    method: "POST",
    body,
    headers: { "x-nonce": nonce, "x-signature": signWebhook({ secretHex, nonce, rawBody: body }) },
  });
  expect(posted.status).toBe(200);
  await processWebhookInbox(stack().services, { worker: "t" });
  expect(await db().payment.findUniqueOrThrow({ where: { id: settled.payment.id } })).toMatchObject({ state: "paid", unverifiedSince: expect.any(Date) });

  await connectAnotherDevice();

  // The first payment completes on the old device; its webhook is lost.
  await stack().sandboxControl(`/sandbox/devices/${oldKey}/webhook-faults`, { mode: "drop", count: 1 });
  await act(open.payment.gatewayOrderId!, { action: "confirm" });

  await advance(FINALISE_AFTER_MS + 60_000);
  const summary = await reconcileOnce(stack().services, { worker: "t" });
  // The new device's listing shows neither order: each is read by its identifier.
  expect(summary.gatewayCalls).toBe(3);
  expect(summary.finalised).toBe(0);
  expect(summary.verified).toBe(1);
  const paid = await db().payment.findUniqueOrThrow({ where: { id: open.payment.id } });
  expect(paid).toMatchObject({ state: "paid", gatewayStatus: "CO", attention: null });
  const verified = await db().payment.findUniqueOrThrow({ where: { id: settled.payment.id }, include: { events: true } });
  expect(verified).toMatchObject({ state: "paid", unverifiedSince: null, attention: null });
  expect(verified.events.map((e) => e.type)).toContain("verified");

  await waitFor(async () => {
    await deliverDueMessages(stack().services, { worker: "t" });
    return [open, settled].every(({ session }) => stack().standin.state.session(session.id)?.state.code === "RESOLVED");
  }, "both resolves delivered");
  for (const { session } of [open, settled]) expect(rejectCalls(session.id)).toHaveLength(0);
});

it("crypto sent after a payment was rejected comes with no webhook: a later listing finds it and flags it over an earlier flag, for a week", async () => {
  await advance(0);
  const { session, payment } = await openPayment(false);
  const orderId = payment.gatewayOrderId!;
  // The order expires and its EX webhook is lost: the next listing rejects the payment.
  await stack().sandboxControl(`/sandbox/devices/${sandboxDeviceKey(await shopRow())}/webhook-faults`, { mode: "drop", count: 1 });
  await act(orderId, { action: "expire" });
  await advance(LIST_SPACING_MS);
  expect((await reconcileOnce(stack().services, { worker: "t" })).settled).toBe(1);
  await waitFor(async () => {
    await deliverDueMessages(stack().services, { worker: "t" });
    return stack().standin.state.session(session.id)?.state.code === "REJECTED";
  }, "the reject delivered");
  // The payment carries an earlier flag (here, as when it was finalised without a read).
  await db().payment.update({ where: { id: payment.id }, data: { attention: "pending_window_expired", attentionDetail: "earlier", attentionResolvedAt: null } });

  // The shopper's wallet pays after all: the gateway records it under EX and sends nothing.
  await act(orderId, { action: "pay", amount: "exact" });
  await advance(LIST_SPACING_MS);
  expect((await reconcileOnce(stack().services, { worker: "t" })).gatewayCalls).toBe(0);
  await advance(LATE_PAYMENT_RECHECK_MS);
  expect((await reconcileOnce(stack().services, { worker: "t" })).gatewayCalls).toBe(1);
  const flagged = await db().payment.findUniqueOrThrow({ where: { id: payment.id }, include: { transactions: true, events: true } });
  expect(flagged).toMatchObject({ state: "failed", gatewayStatus: "EX", attention: "late_payment", attentionResolvedAt: null });
  expect(flagged.transactions).toHaveLength(1);
  expect(flagged.events.filter((e) => e.type === "attention").map((e) => JSON.parse(e.detail).reason)).toEqual(["late_payment"]);

  // Read again only when due, and not at all once the week is over.
  await advance(LIST_SPACING_MS);
  expect((await reconcileOnce(stack().services, { worker: "t" })).gatewayCalls).toBe(0);
  await advance(LATE_PAYMENT_WATCH_MS);
  expect((await reconcileOnce(stack().services, { worker: "t" })).shops).toBe(0);
  await deliverDueMessages(stack().services, { worker: "t" });
  expect(rejectCalls(session.id)).toHaveLength(1);
  expect(await db().outboxMessage.count({ where: { paymentId: payment.id } })).toBe(1);
});

it("crypto sent after a payment was rejected is flagged even when the gateway keeps the order's edited_at: the listing's new transaction is the news", async () => {
  await advance(0);
  const { payment } = await openPayment(false);
  const orderId = payment.gatewayOrderId!;
  await stack().sandboxControl(`/sandbox/devices/${sandboxDeviceKey(await shopRow())}/webhook-faults`, { mode: "drop", count: 1 });
  await act(orderId, { action: "expire" });
  await advance(LIST_SPACING_MS);
  expect((await reconcileOnce(stack().services, { worker: "t" })).settled).toBe(1);
  const rejected = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(rejected).toMatchObject({ state: "failed", gatewayStatus: "EX", attention: null });
  const editedAt = rejected.gatewayEditedAt!.toISOString();

  // The wallet pays after all. The gateway lists the transaction under EX and, unlike the
  // sandbox, leaves the order's edited_at as it was (SPEC.md does not say it changes).
  await act(orderId, { action: "pay", amount: "exact" });
  const keepsEditedAt: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if ((init?.method ?? "GET") !== "GET" || !String(input).includes("/orders/")) return response;
    const body = (await response.json()) as { identifier: string; edited_at: string }[];
    for (const order of body) if (order.identifier === orderId) order.edited_at = editedAt;
    return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
  };
  const base = stack().services;
  const instance = createServices(base.env, { db: base.db, sql: base.sql, logger: stack().logger, clock, fetch: keepsEditedAt });
  await advance(LATE_PAYMENT_RECHECK_MS);
  expect((await reconcileOnce(instance, { worker: "t" })).gatewayCalls).toBe(1);
  const flagged = await db().payment.findUniqueOrThrow({ where: { id: payment.id }, include: { transactions: true } });
  expect(flagged).toMatchObject({ state: "failed", gatewayStatus: "EX", attention: "late_payment", attentionResolvedAt: null });
  expect(flagged.transactions).toHaveLength(1);
  expect(flagged.gatewayEditedAt!.toISOString()).toBe(editedAt);
});

it("a shop's pass that outlasts the reconciler's lease keeps its claim: another instance does not list the same orders meanwhile", async () => {
  await advance(0);
  await openPayment(true);
  await advance(LIST_SPACING_MS);
  // This instance's read of the orders (a listing, or the one order's info) is slow to come back.
  let reached!: () => void;
  const listingReached = new Promise<void>((resolve) => (reached = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const slow: typeof fetch = async (input, init) => {
    if ((init?.method ?? "GET") === "GET" && String(input).includes("/orders/")) {
      reached();
      await released;
    }
    return fetch(input, init);
  };
  const base = stack().services;
  const slowInstance = createServices(base.env, { db: base.db, sql: base.sql, logger: stack().logger, clock, fetch: slow });
  const leaseMs = 300;
  const first = reconcileOnce(slowInstance, { worker: "slow", force: true, leaseMs });
  await listingReached;
  // Several lease terms pass while the listing is out.
  await new Promise((resolve) => setTimeout(resolve, 4 * leaseMs));
  expect((await reconcileOnce(base, { worker: "other", force: true, leaseMs })).shops).toBe(0);
  release();
  expect((await first).shops).toBe(1);
  // Released at the end of the pass: the next one claims the shop.
  expect((await reconcileOnce(base, { worker: "other", force: true, leaseMs })).shops).toBe(1);
});

it("a rejected payment's order made through the merchant's previous device is read by its identifier for late crypto, and counts as checked only once read", async () => {
  await advance(0);
  const restoreWebhooks = await loseWebhooks();
  try {
    // Two orders expire unpaid, their EX webhooks lost: the next listing rejects both payments.
    const first = await openPayment(false);
    const second = await openPayment(false);
    for (const { payment } of [first, second]) await act(payment.gatewayOrderId!, { action: "expire" });
    await advance(LIST_SPACING_MS);
    await reconcileOnce(stack().services, { worker: "t" });
    for (const { payment } of [first, second]) expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ state: "failed", gatewayStatus: "EX" });

    await connectAnotherDevice();
    // The shopper's wallet pays the first after all: the gateway records it under EX and sends nothing.
    await act(first.payment.gatewayOrderId!, { action: "pay", amount: "exact" });
    const rejected = { id: { in: [first.payment.id, second.payment.id] } };
    const checkedBefore = (await db().payment.findMany({ where: rejected, orderBy: { createdAt: "asc" } })).map((p) => p.lastCheckedAt);

    // Due again, but the quota is down to the reserve: the new device's listing is made, it
    // shows neither order, and no look-up is affordable. Neither counts as checked.
    await advance(LATE_PAYMENT_RECHECK_MS);
    const hash = await deviceHash();
    const at = clock.now();
    const inWindow = await db().gatewayCall.count({ where: { deviceHash: hash, at: { gt: new Date(at.getTime() - 60_000) } } });
    await db().gatewayCall.createMany({ data: Array.from({ length: 60 - QUOTA_RESERVE.minute - inWindow }, () => ({ deviceHash: hash, class: "general", at })) });
    expect((await reconcileOnce(stack().services, { worker: "t" })).gatewayCalls).toBe(1);
    await db().gatewayCall.deleteMany({ where: { deviceHash: hash, at } });
    expect((await db().payment.findMany({ where: rejected, orderBy: { createdAt: "asc" } })).map((p) => p.lastCheckedAt)).toEqual(checkedBefore);

    // The next listing (LIST_SPACING_MS on) looks both up: the late crypto is flagged.
    await advance(LIST_SPACING_MS);
    const readAt = clock.now();
    expect((await reconcileOnce(stack().services, { worker: "t" })).gatewayCalls).toBeGreaterThanOrEqual(3);
    const flagged = await db().payment.findUniqueOrThrow({ where: { id: first.payment.id }, include: { transactions: true } });
    expect(flagged).toMatchObject({ state: "failed", gatewayStatus: "EX", attention: "late_payment", attentionResolvedAt: null });
    expect(flagged.transactions).toHaveLength(1);
    for (const payment of await db().payment.findMany({ where: rejected })) expect(payment.lastCheckedAt!.getTime()).toBeGreaterThanOrEqual(readAt.getTime());
    expect(await db().payment.findUniqueOrThrow({ where: { id: second.payment.id } })).toMatchObject({ state: "failed", attention: null });

    // Both were read: neither makes a listing due before LATE_PAYMENT_RECHECK_MS.
    await advance(LIST_SPACING_MS);
    expect((await reconcileOnce(stack().services, { worker: "t" })).gatewayCalls).toBe(0);
  } finally {
    await restoreWebhooks();
  }
});

it("when the listing alone fails at the finalise point, each order is read by its identifier: a payment completed with its webhooks lost is resolved, not rejected unread", async () => {
  await advance(0);
  const restoreWebhooks = await loseWebhooks();
  const paid = await openPayment(true);
  await act(paid.payment.gatewayOrderId!, { action: "confirm" });
  const abandoned = await openPayment(false);
  await restoreWebhooks();
  await advance(FINALISE_AFTER_MS + 60_000);
  await stack().sandboxControl("/sandbox/faults", { endpoint: "orders.list", kind: "http_500", count: 1000 });
  try {
    const summary = await reconcileOnce(stack().services, { worker: "t" });
    // The failed listing, then the closing payments' orders one by one.
    expect(summary.gatewayCalls).toBeGreaterThanOrEqual(3);
    expect(summary.settled).toBeGreaterThanOrEqual(1);
    // Past the time a closing payment may wait for a read: none is left to reject unread.
    await advance(FINALISE_UNREAD_AFTER_MS - FINALISE_AFTER_MS);
    expect((await reconcileOnce(stack().services, { worker: "t" })).finalised).toBe(0);
  } finally {
    await stack().sandboxControl("/sandbox/faults", undefined, "DELETE");
  }
  expect(await db().payment.findUniqueOrThrow({ where: { id: paid.payment.id } })).toMatchObject({ state: "paid", gatewayStatus: "CO", attention: null });
  // The one never paid expired at the gateway: rejected from its read, with nothing to flag.
  expect(await db().payment.findUniqueOrThrow({ where: { id: abandoned.payment.id } })).toMatchObject({ state: "failed", gatewayStatus: "EX", attention: null });
  await waitFor(async () => {
    await deliverDueMessages(stack().services, { worker: "t" });
    return stack().standin.state.session(paid.session.id)?.state.code === "RESOLVED";
  }, "the resolve delivered");
  expect(rejectCalls(paid.session.id)).toHaveLength(0);
}, 60_000);

it("shops are reconciled a few at a time: a device slow to answer does not hold up another shop's reads", async () => {
  await advance(0);
  const other = await connectSandbox(stack().services, "slow-device.myshopify.com");
  if (!other.ok) throw new Error(other.message);
  const otherPayment = await db().payment.create({ data: paymentColumns(other.shop.id, { gatewayOrderId: crypto.randomUUID(), createdAt: clock.now() }) });
  const restoreWebhooks = await loseWebhooks();
  const paid = await openPayment(true);
  await act(paid.payment.gatewayOrderId!, { action: "confirm" });
  await restoreWebhooks();

  // Every read of either device's orders is held until both devices have one out at once, or
  // for 10 s: reconciled one after another, neither read would ever have the other's beside it.
  const devices = [sandboxDeviceKey(await shopRow()), stack().services.cipher.decrypt(other.shop.sandboxDeviceKeyEnc!, credentialContext(other.shop.id, "sandbox", "device-key"))];
  const reading = new Set<string>();
  let together = false;
  let bothReading!: () => void;
  const bothOut = new Promise<void>((resolve) => (bothReading = resolve));
  const held: typeof fetch = async (input, init) => {
    const device = new Headers(init?.headers).get("x-device-id");
    if ((init?.method ?? "GET") === "GET" && String(input).includes("/orders/") && device && devices.includes(device)) {
      reading.add(device);
      if (devices.every((key) => reading.has(key))) {
        together = true;
        bothReading();
      }
      // A read the client gives up on (its timeout) is no longer out.
      const givenUp = new Promise((resolve) => init?.signal?.addEventListener("abort", resolve, { once: true }));
      await Promise.race([bothOut, givenUp, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      reading.delete(device);
    }
    return fetch(input, init);
  };
  const base = stack().services;
  const instance = createServices(base.env, { db: base.db, sql: base.sql, logger: stack().logger, clock, fetch: held, gatewayRetry: { maxAttempts: 1 } });
  try {
    const summary = await reconcileOnce(instance, { worker: "t", force: true });
    expect(summary.shops).toBe(2);
    expect(together).toBe(true);
    expect(await db().payment.findUniqueOrThrow({ where: { id: paid.payment.id } })).toMatchObject({ state: "paid", gatewayStatus: "CO" });
    // The other shop's order is in no listing and gone when looked up: checked all the same.
    expect((await db().payment.findUniqueOrThrow({ where: { id: otherPayment.id } })).lastCheckedAt).not.toBeNull();
    // Each shop's claim was released.
    expect(await db().shop.count({ where: { reconcileLockedBy: { not: null } } })).toBe(0);
  } finally {
    await db().payment.delete({ where: { id: otherPayment.id } });
  }
}, 60_000);

it("a stopping instance claims no more shops: the shops its pass had not reached are left for another at once", async () => {
  await advance(0);
  const other = await connectSandbox(stack().services, "stopping-pass.myshopify.com");
  if (!other.ok) throw new Error(other.message);
  const otherPayment = await db().payment.create({ data: paymentColumns(other.shop.id, { gatewayOrderId: crypto.randomUUID(), createdAt: clock.now() }) });
  await openPayment(false);
  try {
    // The stop comes while the pass works on its first shop.
    let stopping = false;
    const base = stack().services;
    const stoppingAfterFirstClaim = createServices(base.env, { db: base.db, sql: base.sql, logger: stack().logger, clock, fetch: (async (input, init) => {
      stopping = true;
      return fetch(input, init);
    }) as typeof fetch });
    const summary = await reconcileOnce(stoppingAfterFirstClaim, { worker: "stopping", force: true, shopConcurrency: 1, stopping: () => stopping });
    expect(summary.shops).toBe(1);
    expect(await db().shop.count({ where: { reconcileLockedBy: { not: null } } })).toBe(0);
    // Stopping from the start: nothing is claimed.
    expect((await reconcileOnce(base, { worker: "stopped", force: true, stopping: () => true })).shops).toBe(0);
  } finally {
    await db().payment.delete({ where: { id: otherPayment.id } });
  }
}, 60_000);
