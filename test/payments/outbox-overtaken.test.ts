// A pending call still on its way to Shopify when the payment's final call is delivered:
// Shopify refuses the pending (the session is resolved already), and that is no error for a
// person to look at.
import { setTimeout as sleep } from "node:timers/promises";
import { expect, it } from "vitest";
import { deliverNow, enqueue, finalMessageKey } from "../../app/payments/outbox";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });

it("a pending call overtaken by the resolve while on its way is done, and the paid payment is not flagged", async () => {
  const { services, standin, shopDomain } = stack();
  const db = services.db;
  const { session } = await standin.state.startPayment({ test: true });
  const payment = await db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  const now = new Date();
  const [pending, final] = await db.$transaction(async (tx) => [
    await enqueue(tx, {
      shopDomain,
      paymentId: payment.id,
      dedupeKey: `payment:${payment.id}:pending`,
      payload: { kind: "payment.pending", gid: payment.gid, reason: "BUYER_ACTION_REQUIRED", pendingExpiresAt: new Date(now.getTime() + 86_400_000).toISOString() },
      now,
    }),
    await enqueue(tx, { shopDomain, paymentId: payment.id, dedupeKey: finalMessageKey(payment.id), payload: { kind: "payment.resolve", gid: payment.gid }, now }),
  ]);
  // Shopify takes its time with the pending call; the resolve goes out meanwhile.
  standin.state.setFault({ mode: "slow", count: 1, delayMs: 800 });
  const slowPending = deliverNow(services, pending.id);
  await sleep(150);
  expect(await deliverNow(services, final.id)).toBe("done");
  expect(await slowPending).toBe("skipped");

  const after = await db.payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(after).toMatchObject({ shopifyOutcome: "resolved", attention: null });
  expect(await db.outboxMessage.findUniqueOrThrow({ where: { id: pending.id } })).toMatchObject({ status: "done", result: JSON.stringify({ superseded: true }) });
  expect(standin.state.session(session.id)?.state.code).toBe("RESOLVED");
});
