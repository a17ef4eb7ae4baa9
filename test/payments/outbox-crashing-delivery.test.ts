// An outbox message whose delivery crashes every time (its payload no longer parses): the
// other payments' calls of the same pass are still delivered, and the crashing one is counted
// as an attempt each time, tried less and less often, and listed on the health page with its
// error once it has failed a few times in a row, instead of being tried every 5 seconds
// forever with no sign anywhere but the log.
import { expect, it } from "vitest";
import { shopHealth } from "../../app/admin/health.server";
import { deliveryPass, enqueue, finalMessageKey } from "../../app/payments/outbox";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });

it("a delivery that keeps crashing backs off and reaches the health page, while the pass delivers the rest", async () => {
  const { services, standin, shopDomain } = stack();
  const started = async () => {
    const { session } = await standin.state.startPayment({ test: true });
    return { session, payment: await services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } }) };
  };
  const poisoned = await started();
  const healthy = await started();
  const [poison, good] = await services.db.$transaction(async (tx) => [
    await enqueue(tx, { shopDomain, paymentId: poisoned.payment.id, dedupeKey: finalMessageKey(poisoned.payment.id), payload: { kind: "payment.resolve", gid: poisoned.payment.gid }, now: new Date() }),
    await enqueue(tx, { shopDomain, paymentId: healthy.payment.id, dedupeKey: finalMessageKey(healthy.payment.id), payload: { kind: "payment.resolve", gid: healthy.payment.gid }, now: new Date() }),
  ]);
  // Written by an older version of the app, say: it no longer parses.
  await services.db.outboxMessage.update({ where: { id: poison.id }, data: { payload: JSON.stringify({ kind: "payment.resolve" }) } });

  /** How long after the pass the next attempt is due, at least and at most (the pass's own time between). */
  const waits: { least: number; most: number }[] = [];
  for (let pass = 1; pass <= 4; pass++) {
    await services.db.outboxMessage.update({ where: { id: poison.id }, data: { nextAttemptAt: new Date() } });
    const before = Date.now();
    await deliveryPass(services, { worker: "t" });
    const after = Date.now();
    const row = await services.db.outboxMessage.findUniqueOrThrow({ where: { id: poison.id } });
    expect(row).toMatchObject({ status: "pending", attempts: pass, lockedBy: null });
    expect(row.lastError).toMatch(/^The app failed while sending this call: /);
    expect(row.lastError!.length).toBeLessThanOrEqual(500);
    waits.push({ least: row.nextAttemptAt.getTime() - after, most: row.nextAttemptAt.getTime() - before });
  }
  // The outbox's backoff: 1 s doubling with each attempt, within 20 % either way.
  waits.forEach((wait, i) => {
    const base = 1_000 * 2 ** i;
    expect(wait.most, `wait after attempt ${i + 1}`).toBeGreaterThanOrEqual(0.8 * base);
    expect(wait.least, `wait after attempt ${i + 1}`).toBeLessThanOrEqual(1.2 * base);
  });

  expect(await services.db.outboxMessage.findUniqueOrThrow({ where: { id: good.id } })).toMatchObject({ status: "done" });
  expect(standin.state.session(healthy.session.id)?.state.code).toBe("RESOLVED");

  const shop = await services.db.shop.findUniqueOrThrow({ where: { shopDomain } });
  const health = await shopHealth(services, shop);
  expect(health.outboxRetrying).toEqual([expect.objectContaining({ id: poison.id, kind: "payment.resolve", attempts: 4, lastError: expect.stringMatching(/^The app failed while sending this call: /) })]);
});
