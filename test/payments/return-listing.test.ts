// A shopper's return that must read its order (nothing the app holds tells where the payment
// stands: the order's webhooks were lost) reads the shop's orders in one listing instead, as
// the reconciler would: the same one call, and the shop's other payments whose webhooks were
// lost are settled by it too, and the reconciler's next listing waits its hour from then. When
// another pass holds the shop, the order is read by itself; when the listing fails, nothing
// more is spent while the shopper waits. Gateway calls are counted on the app's shared quota
// record (one row per call). On SQLite and on PostgreSQL.
import { beforeEach, describe, expect, it } from "vitest";
import { LIST_SPACING_MS, reconcileOnce } from "../../app/payments/reconcile";
import { PAID_IN_FULL, paymentThrough, setWebhookFaults, stackOnDatabase } from "../support/stack";

describe.each(["sqlite", "postgresql"] as const)("a return that reads, on %s", (kind) => {
  const started = stackOnDatabase(kind);
  let stack: ReturnType<typeof started>;
  beforeEach(() => void (stack = started()));

  const db = () => stack.services.db;
  const shopifyState = (sessionId: string) => stack.standin.state.session(sessionId)?.state;
  const gatewayCalls = () => db().gatewayCall.count();
  const shop = () => db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });

  const webhookFaults = (mode: "drop" | "deliver") => setWebhookFaults(stack, mode);

  /** A payment the shopper paid in full at the gateway, every webhook of it lost: the app still shows the order as created. */
  async function paidUnseen() {
    const { session, payment } = await paymentThrough(stack, PAID_IN_FULL);
    expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).gatewayStatus).toBe("NR");
    return { session, payment };
  }

  async function open(url: string) {
    const answer = await fetch(url, { redirect: "manual" });
    await answer.text();
    return { status: answer.status, location: answer.headers.get("location") };
  }

  /** Settles every open payment the tests before left, so each test starts from a shop with none. */
  async function settleLeftovers() {
    await webhookFaults("deliver");
    await stack.sandboxControl("/sandbox/faults", undefined, "DELETE");
    await db().shop.update({ where: { shopDomain: stack.shopDomain }, data: { reconcileLockedBy: null, reconcileLockedUntil: null } });
    await reconcileOnce(stack.services, { worker: "test", force: true });
  }

  it("reads the shop's orders in one call: the shopper's payment and another whose webhooks were lost are both settled, and the listing counts as the shop's", async () => {
    await settleLeftovers();
    await webhookFaults("drop");
    const first = await paidUnseen();
    const second = await paidUnseen();
    const before = await gatewayCalls();
    const startedAt = new Date();

    const back = await open(stack.services.links.returnUrl(first.payment, "ok"));
    expect(back.status).toBe(303);
    expect(back.location).not.toBe(first.payment.cancelUrl);
    expect(await gatewayCalls()).toBe(before + 1);
    expect(shopifyState(first.session.id)?.code).toBe("RESOLVED");
    const [firstRow, secondRow] = await Promise.all([first, second].map(({ payment }) => db().payment.findUniqueOrThrow({ where: { id: payment.id } })));
    expect([firstRow!.state, secondRow!.state]).toEqual(["paid", "paid"]);
    expect((await shop()).listedSandboxAt!.getTime()).toBeGreaterThanOrEqual(startedAt.getTime() - 1_000);
    // The shopper's own payment is settled as read at the return, the other as the reconciler's.
    const sources = async (paymentId: string) =>
      (await db().paymentEvent.findMany({ where: { paymentId, type: "state" } })).map((event) => (JSON.parse(event.detail) as { source?: string }).source);
    expect(await sources(first.payment.id)).toContain("return");
    expect(await sources(second.payment.id)).toContain("reconcile");

    // The second shopper's return finds the payment settled: no call.
    await open(stack.services.links.returnUrl(second.payment, "ok"));
    expect(await gatewayCalls()).toBe(before + 1);
    // The reconciler's next pass within the hour makes none either.
    await reconcileOnce(stack.services, { worker: "test" });
    expect(await gatewayCalls()).toBe(before + 1);
    expect(LIST_SPACING_MS).toBe(3_600_000);
  }, 90_000);

  it("reads the shopper's order by itself when another pass holds the shop", async () => {
    await settleLeftovers();
    await webhookFaults("drop");
    const first = await paidUnseen();
    const second = await paidUnseen();
    await db().shop.update({ where: { shopDomain: stack.shopDomain }, data: { reconcileLockedBy: "another-instance", reconcileLockedUntil: new Date(Date.now() + 60_000) } });
    const before = await gatewayCalls();

    const back = await open(stack.services.links.returnUrl(first.payment, "ok"));
    expect(back.status).toBe(303);
    expect(await gatewayCalls()).toBe(before + 1);
    expect(shopifyState(first.session.id)?.code).toBe("RESOLVED");
    expect((await db().payment.findUniqueOrThrow({ where: { id: second.payment.id } })).state).toBe("awaiting_payment");
    // The other pass's claim is left as it was.
    expect((await shop()).reconcileLockedBy).toBe("another-instance");
  }, 90_000);

  it("a listing that fails costs the one attempt: the shopper is not sent to choose again, and no read by identifier follows", async () => {
    await settleLeftovers();
    await webhookFaults("drop");
    const first = await paidUnseen();
    await paidUnseen();
    await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.list", kind: "http_500", count: 20 });
    const before = await gatewayCalls();

    const back = await open(stack.services.links.returnUrl(first.payment, "ok"));
    expect(back.status === 303 && back.location === first.payment.cancelUrl).toBe(false);
    expect(await gatewayCalls()).toBe(before + 1);
    expect(await db().paymentEvent.count({ where: { paymentId: first.payment.id, type: "shopper_abandoned" } })).toBe(0);
  }, 90_000);
});
