// A return whose read of the shop's orders fails (one 3 s attempt, no retries) leaves the
// reconciler's schedule as it was: another payment whose webhooks were lost is settled by the
// reconciler's next listing once the gateway answers again. On SQLite and PostgreSQL.
import { beforeEach, describe, expect, it } from "vitest";
import { reconcileOnce } from "../../app/payments/reconcile";
import { PAID_IN_FULL, paymentThrough, setWebhookFaults, stackOnDatabase, type Stack } from "../support/stack";

describe.each(["sqlite", "postgresql"] as const)("a failed return listing, on %s", (kind) => {
  let offsetMs = 0;
  const clock = { now: () => new Date(Date.now() + offsetMs) };
  const started = stackOnDatabase(kind, { clock, workers: false, gatewayRetry: { baseDelayMs: 5, maxDelayMs: 20 } });
  let stack: Stack;
  beforeEach(() => void (stack = started()));
  const db = () => stack.services.db;

  it("does not keep the reconciler from listing once the gateway answers again", async () => {
    await setWebhookFaults(stack, "drop");
    const shopper = await paymentThrough(stack, PAID_IN_FULL);
    const other = await paymentThrough(stack, PAID_IN_FULL);
    // Both are due for the reconciler (past the first 15-minute check).
    offsetMs += 16 * 60_000;
    const listedBefore = (await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } })).listedSandboxAt;

    // The gateway fails the return's one listing attempt (a single 500).
    await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.list", kind: "http_500", count: 1 });
    const back = await fetch(stack.services.links.returnUrl(shopper.payment, "ok"), { redirect: "manual" });
    await back.text();
    await stack.sandboxControl("/sandbox/faults", undefined, "DELETE");
    const listedAfter = (await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } })).listedSandboxAt;
    expect(listedAfter).toEqual(listedBefore);

    // The gateway answers again; the reconciler's next cycles (a minute, then 30 minutes on).
    offsetMs += 60_000;
    const first = await reconcileOnce(stack.services, { worker: "t" });
    offsetMs += 30 * 60_000;
    const second = await reconcileOnce(stack.services, { worker: "t" });
    const row = await db().payment.findUniqueOrThrow({ where: { id: other.payment.id } });
    expect(first.gatewayCalls + second.gatewayCalls).toBeGreaterThanOrEqual(1);
    expect(row.state).toBe("paid");
  }, 90_000);
});
