// The outbox pass's per-shop share and its cap on one shop's calls at once (app/payments/outbox.ts),
// on SQLite and PostgreSQL: a shop whose calls hang keeps its share when new calls of it arrive;
// the cap leaves no slot idle; a call a pass kept after a timeout, and that a shopper's return
// took over once due, is sent once.
import { err, ok } from "neverthrow";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { deliverDueMessages, enqueue, finalMessageKey } from "../../app/payments/outbox";
import type { PaymentsDeps, ShopifyDirectory } from "../../app/payments/deps";
import type { PaymentsAppsClient, PaymentsAppsResult } from "../../app/shopify/payments-apps/client";
import { silentLogger } from "../../app/lib/logger.server";
import { paymentColumns } from "../support/payment-rows";
import { ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

const SHOP = "outbox-shares.myshopify.com";

const resolved = (gid: string): PaymentsAppsResult =>
  ok({ operation: "PaymentSessionResolve", sessionId: gid, state: { code: "RESOLVED" }, redirectUrl: null, pendingExpiresAt: null, userErrors: [] } as never);
const timedOut = (): PaymentsAppsResult =>
  err({ kind: "timeout", retryable: true, operation: "PaymentSessionResolve", timeoutMs: 15_000, message: "No complete answer within 15000 ms" } as never);

function client(during: (gid: string) => Promise<PaymentsAppsResult | void>): PaymentsAppsClient {
  return {
    endpoint: "https://example.test",
    async resolvePaymentSession(gid: string) {
      return (await during(gid)) ?? resolved(gid);
    },
  } as unknown as PaymentsAppsClient;
}

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: "outbox-shares-webhook-0001" });
  let opened: OpenedRows;
  beforeAll(() => void (opened = rows()));
  let offsetMs = 0;
  const clock = { now: () => new Date(Date.now() + offsetMs) };
  const instance = (shopify: ShopifyDirectory): PaymentsDeps => ({ db: opened.db, sql: opened.sql, clock, logger: silentLogger, shopify }) as unknown as PaymentsDeps;

  beforeEach(async () => {
    offsetMs = 0;
    await opened.db.outboxMessage.deleteMany({});
  });

  let shops = 0;
  async function anotherShop(): Promise<{ shopDomain: string; id: string }> {
    shops++;
    return opened.db.shop.create({ data: { shopDomain: `outbox-shares-${shops}.myshopify.com`, webhookToken: `outbox-shares-webhook-${String(shops).padStart(3, "0")}x` } });
  }
  async function paidWithResolve(shop: { shopDomain: string; id: string }) {
    const payment = await opened.db.payment.create({ data: paymentColumns(shop.id, { state: "paid" }) });
    await opened.db.$transaction((tx) =>
      enqueue(tx, { shopDomain: shop.shopDomain, paymentId: payment.id, dedupeKey: finalMessageKey(payment.id), payload: { kind: "payment.resolve", gid: payment.gid }, now: clock.now() }),
    );
    return payment;
  }

  it("a shop whose calls hang (its earlier ones wait out their backoff after timing out) keeps its share when new calls of it arrive", async () => {
    const hanging = await anotherShop();
    // The shop's earlier call timed out five times and waits out its backoff: it was tried before.
    const earlier = await paidWithResolve(hanging);
    await opened.db.outboxMessage.updateMany({
      where: { dedupeKey: finalMessageKey(earlier.id) },
      data: { attempts: 5, lastError: "No complete answer within 15000 ms", nextAttemptAt: new Date(clock.now().getTime() + 60_000) },
    });
    // New payments of the same shop arrive; no other shop has a call due at this moment.
    for (let i = 0; i < 20; i++) await paidWithResolve(hanging);
    let hangingCalls = 0;
    const directory: ShopifyDirectory = {
      forShop: async () =>
        client(async () => {
          hangingCalls++;
          offsetMs += 15_000 / 8;
          return timedOut();
        }),
    };
    await deliverDueMessages(instance(directory), { worker: "instance-a", limit: 50, concurrency: 8 });

    // Each of them hangs 15 s: a pass of 20 keeps any other shop's call stored meanwhile waiting 45 s instead of 30 s.
    expect(hangingCalls).toBeLessThanOrEqual(10);
  });

  it("with two shops' calls waiting and an odd concurrency, every slot of the pass is used", async () => {
    const [a, b] = [await anotherShop(), await anotherShop()];
    for (let i = 0; i < 3; i++) await paidWithResolve(a);
    for (let i = 0; i < 3; i++) await paidWithResolve(b);
    let inFlight = 0;
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    // Shopify answers nothing until the test has counted the calls on their way.
    const slow = client(async () => {
      inFlight++;
      await answered;
    });
    const pass = deliverDueMessages(instance({ forShop: async () => slow }), { worker: "instance-b", concurrency: 3 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const onTheirWay = inFlight;
    answer();
    expect(await pass).toMatchObject({ done: 6 });
    // Three slots, six payments of two shops waiting: one slot stays idle while both shops wait.
    expect(onTheirWay).toBe(3);
  });

  it("a kept call deliverNow took while the pass runs: the pass's end leaves the inline claim alone and no other pass sends it", async () => {
    const shop = await anotherShop();
    const a = await paidWithResolve(shop);
    offsetMs += 1;
    const c = await paidWithResolve(shop);
    const sent: string[] = [];
    let inlineAnswer: () => void = () => undefined;
    const inlineAnswered = new Promise<void>((resolve) => (inlineAnswer = resolve));
    let inline: Promise<unknown> | null = null;
    const { deliverNow } = await import("../../app/payments/outbox");
    const inlineDeps = instance({ forShop: async () => client(async (gid) => { sent.push(`inline ${gid}`); await inlineAnswered; }) });
    const directory: ShopifyDirectory = {
      forShop: async () =>
        client(async (gid) => {
          sent.push(`pass ${gid}`);
          if (gid === a.gid) return timedOut();
          offsetMs += 5_000;
          const id = (await opened.db.outboxMessage.findUniqueOrThrow({ where: { dedupeKey: finalMessageKey(a.id) } })).id;
          inline = deliverNow(inlineDeps, id);
          for (let i = 0; i < 100 && sent.length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 5));
        }),
    };
    const counts = await deliverDueMessages(instance(directory), { worker: "instance-c", concurrency: 1 });
    const held = await opened.db.outboxMessage.findUniqueOrThrow({ where: { dedupeKey: finalMessageKey(a.id) } });
    const other = await deliverDueMessages(instance({ forShop: async () => client(async (gid) => void sent.push(`other ${gid}`)) }), { worker: "instance-d", concurrency: 4 });
    inlineAnswer();
    expect(await inline).toBe("done");
    expect({ counts, heldBy: held.lockedBy?.startsWith("inline-"), other }).toEqual({
      counts: { done: 1, failed: 0, retry: 1, skipped: 0 },
      heldBy: true,
      other: { done: 0, failed: 0, retry: 0, skipped: 0 },
    });
    expect(sent).toEqual([`pass ${a.gid}`, `pass ${c.gid}`, `inline ${a.gid}`]);
  });
});
