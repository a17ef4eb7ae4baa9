// An order paid in full whose transactions have their first block confirmation (AC with
// safe=true, the gateway's own "paid" group in FACTS.md) is still "confirming" for this app:
// only CO or CM settles a Shopify payment as paid. Read by the reconciler's listing and by
// "Check now", such an order leaves the Shopify session unresolved; the gateway's `confirm`
// (CO) then resolves it.
import { expect, it } from "vitest";
import { checkPaymentNow } from "../../app/payments/check-payment";
import { deliverDueMessages } from "../../app/payments/outbox";
import { reconcileOnce } from "../../app/payments/reconcile";
import { stackForFile, waitFor } from "../support/stack";

const stack = stackForFile();
const db = () => stack().services.db;

interface SandboxOrder {
  status: string;
  safe: boolean;
  crypto_amount: number;
  confirmed_amount: number;
  unconfirmed_amount: number;
  edited_at: string;
  transactions: Array<{ tx_hash: string; confirmed: boolean; block: number | null }>;
}

const act = (orderId: string, body: Record<string, string>) => stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, body) as Promise<SandboxOrder>;
const shopifyState = (sessionId: string) => stack().standin.state.session(sessionId)?.state;

it("a paid order confirmed once (AC, safe) stays confirming and unresolved; confirm resolves it", async () => {
  const { session, delivery } = await stack().standin.state.startPayment({ test: true });
  expect(delivery.status, delivery.body).toBe(200);
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  const orderId = payment.gatewayOrderId!;
  await act(orderId, { action: "choose_currency", currency: "ETH" });
  await act(orderId, { action: "pay", amount: "exact" });
  // The AC webhook asks nothing of Shopify (it is left for a read): waited for so that it is
  // behind us, not racing the reads below.
  await waitFor(async () => (await db().gatewayWebhook.count({ where: { orderId, status: "AC", processedAt: { not: null } } })) > 0 || null, "the AC webhook processed");

  const once = await act(orderId, { action: "confirm_once" });
  expect(once).toMatchObject({ status: "AC", safe: true, unconfirmed_amount: 0, confirmed_amount: once.crypto_amount });
  const [tx] = once.transactions;
  expect(tx).toMatchObject({ confirmed: true });
  expect(Number.isInteger(tx?.block)).toBe(true);

  // The reconciler's listing, then "Check now"'s GET /orders/info: both see AC with safe=true.
  const summary = await reconcileOnce(stack().services, { worker: "ac-safe", force: true });
  expect(summary.gatewayCalls).toBeGreaterThanOrEqual(1);
  expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ state: "confirming", gatewayStatus: "AC", finalizedAt: null });
  const checked = await checkPaymentNow(stack().services, payment.shopId, payment.id);
  expect(checked).toMatchObject({ ok: true, state: "confirming", gatewayStatus: "AC", shopify: null });

  const read = await db().payment.findUniqueOrThrow({ where: { id: payment.id }, include: { transactions: true } });
  expect(read).toMatchObject({ state: "confirming", gatewayStatus: "AC", percentage: "100.0", finalizedAt: null });
  // The read was taken (the order's new edited_at and its confirmed transaction are stored), not skipped.
  expect(read.gatewayEditedAt?.getTime()).toBe(Date.parse(once.edited_at));
  expect(read.transactions.map((t) => ({ txHash: t.txHash, confirmed: t.confirmed, block: t.block === null ? null : Number(t.block) }))).toEqual([
    { txHash: tx?.tx_hash, confirmed: true, block: tx?.block },
  ]);
  await deliverDueMessages(stack().services, { worker: "ac-safe" });
  expect(await db().outboxMessage.count({ where: { paymentId: payment.id, kind: "payment.resolve" } })).toBe(0);
  expect(shopifyState(session.id)?.code).not.toBe("RESOLVED");

  const co = await act(orderId, { action: "confirm" });
  expect(co).toMatchObject({ status: "CO", safe: true });
  await waitFor(async () => shopifyState(session.id)?.code === "RESOLVED" || null, "the session resolved after CO");
  const paid = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(paid).toMatchObject({ state: "paid", gatewayStatus: "CO" });
  expect(await db().outboxMessage.count({ where: { paymentId: payment.id, kind: "payment.resolve" } })).toBe(1);
}, 60_000);
