// The outbox when Shopify answers slowly, on SQLite and PostgreSQL. A pass keeps its claims
// while it runs (renewed every third of a claim, and again just before each call), so another
// instance's pass never sends a call this one is still going to send; a claim no pass renews
// any more expires, and another instance takes the message over. A pass is shared between the
// shops, so one shop whose calls hang until they time out cannot keep another shop's calls
// waiting, and a call that timed out is not tried again while the pass that tried it runs
// (though a shopper's return or the merchant's "Check now" sends it once it is due). A pass
// that fails ends only when its calls on their way to Shopify have been answered.
// Shopify's slowness is simulated: each call moves the instances' clock (and, where the test
// says so, the pass's renewal timer) forward instead of taking real time.
import { err, ok } from "neverthrow";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { deliverDueMessages, deliverNow, deliveryPass, enqueue, finalMessageKey, retryFinalCallNow } from "../../app/payments/outbox";
import type { PaymentsDeps, ShopifyDirectory } from "../../app/payments/deps";
import type { PaymentsAppsClient, PaymentsAppsResult } from "../../app/shopify/payments-apps/client";
import { silentLogger } from "../../app/lib/logger.server";
import { paymentColumns } from "../support/payment-rows";
import { ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

const SHOP = "outbox-fairness.myshopify.com";

/** What a Shopify call answered. */
function accepted(gid: string, code: "RESOLVED" | "PENDING"): PaymentsAppsResult {
  return ok({ operation: code === "RESOLVED" ? "PaymentSessionResolve" : "PaymentSessionPending", sessionId: gid, state: { code }, redirectUrl: null, pendingExpiresAt: null, userErrors: [] } as never);
}
const timedOut = (): PaymentsAppsResult =>
  err({ kind: "timeout", retryable: true, operation: "PaymentSessionResolve", timeoutMs: 15_000, message: "No complete answer within 15000 ms" } as never);

/**
 * A Payments Apps client that records every call it is sent (`resolve <gid>`, `pending <gid>`);
 * `during` runs inside each call (the call's time passing) and may give its answer.
 */
function recordingClient(sent: string[], during: (gid: string) => Promise<PaymentsAppsResult | void> = async () => undefined): PaymentsAppsClient {
  const unused = () => Promise.reject(new Error("not used in this test"));
  return {
    endpoint: "https://example.test",
    async resolvePaymentSession(gid: string) {
      sent.push(`resolve ${gid}`);
      return (await during(gid)) ?? accepted(gid, "RESOLVED");
    },
    async pendPaymentSession(gid: string) {
      sent.push(`pending ${gid}`);
      return (await during(gid)) ?? accepted(gid, "PENDING");
    },
    rejectPaymentSession: unused,
    resolveRefundSession: unused,
    rejectRefundSession: unused,
    resolveCaptureSession: unused,
    rejectCaptureSession: unused,
    resolveVoidSession: unused,
    rejectVoidSession: unused,
    configurePaymentsApp: unused,
  } as unknown as PaymentsAppsClient;
}

const everyShop = (client: PaymentsAppsClient): ShopifyDirectory => ({ forShop: async () => client });

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: "outbox-fairness-webhook-01" });
  let opened: OpenedRows;
  beforeAll(() => void (opened = rows()));

  /** The instances' clock: Shopify's slowness moves it forward. */
  let offsetMs = 0;
  const clock = { now: () => new Date(Date.now() + offsetMs) };
  const instance = (shopify: ShopifyDirectory): PaymentsDeps => ({ db: opened.db, sql: opened.sql, clock, logger: silentLogger, shopify }) as unknown as PaymentsDeps;

  beforeEach(async () => {
    offsetMs = 0;
    await opened.db.outboxMessage.deleteMany({});
  });
  afterEach(() => void vi.useRealTimers());

  let shops = 0;
  async function anotherShop(): Promise<{ shopDomain: string; id: string }> {
    shops++;
    return opened.db.shop.create({ data: { shopDomain: `other-${shops}.myshopify.com`, webhookToken: `outbox-fairness-webhook-${String(shops).padStart(3, "0")}x` } });
  }

  /** A paid payment of the shop, with its resolve stored. */
  async function paidWithResolve(shop: { shopDomain: string; id: string } = { shopDomain: SHOP, id: opened.shopId }) {
    const payment = await opened.db.payment.create({ data: paymentColumns(shop.id, { state: "paid" }) });
    await opened.db.$transaction((tx) =>
      enqueue(tx, { shopDomain: shop.shopDomain, paymentId: payment.id, dedupeKey: finalMessageKey(payment.id), payload: { kind: "payment.resolve", gid: payment.gid }, now: clock.now() }),
    );
    return payment;
  }

  /**
   * Moves the clock by `ms` and, when the pass's renewal timer is simulated too, that timer,
   * then waits (a moment at most) for the renewals it started to be written.
   */
  async function elapse(ms: number, worker: string): Promise<void> {
    offsetMs += ms;
    if (!vi.isFakeTimers()) return;
    vi.advanceTimersByTime(ms);
    const lapsed = () => opened.db.outboxMessage.count({ where: { status: "pending", lockedBy: { startsWith: worker }, lockedUntil: { lt: clock.now() } } });
    for (let waited = 0; waited < 1_000 && (await lapsed()) > 0; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  it("a message whose claim lapsed while a slow pass was busy, and that another instance's pass took since, is left to that pass: each resolve reaches Shopify once", async () => {
    const payments = [];
    for (let i = 0; i < 10; i++) payments.push(await paidWithResolve());
    const sent: string[] = [];
    let calls = 0;
    let other: Record<string, number> | null = null;
    // Shopify takes 5 s a call, one call at a time: the seventh starts 30 s after the pass
    // claimed its batch, and no renewal ran meanwhile (the renewal timer runs on real time).
    const slow = recordingClient(sent, async () => {
      offsetMs += 5_000;
      if (++calls === 7) other = await deliverDueMessages(instance(everyShop(recordingClient(sent))), { worker: "instance-b", limit: 50, concurrency: 8 });
    });
    const counts = await deliverDueMessages(instance(everyShop(slow)), { worker: "instance-a", limit: 50, concurrency: 1 });

    expect(payments.map((p) => sent.filter((call) => call === `resolve ${p.gid}`).length)).toEqual(payments.map(() => 1));
    expect({ a: counts, b: other }).toEqual({ a: { done: 7, failed: 0, retry: 0, skipped: 3 }, b: { done: 3, failed: 0, retry: 0, skipped: 0 } });
    expect(await opened.db.outboxMessage.count({ where: { status: "done", lockedBy: null } })).toBe(10);
  });

  it("a slow pass renews its claims while it runs, so another instance's pass meanwhile finds nothing to take", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const payments = [];
    for (let i = 0; i < 10; i++) payments.push(await paidWithResolve());
    const sent: string[] = [];
    let calls = 0;
    let other: Record<string, number> | null = null;
    // 5 s a call, one at a time: 50 s for the batch, beyond one claim (30 s).
    const slow = recordingClient(sent, async () => {
      await elapse(5_000, "instance-a");
      if (++calls === 7) other = await deliverDueMessages(instance(everyShop(recordingClient(sent))), { worker: "instance-b", limit: 50, concurrency: 8 });
    });
    const counts = await deliverDueMessages(instance(everyShop(slow)), { worker: "instance-a", limit: 50, concurrency: 1 });

    expect(other).toEqual({ done: 0, failed: 0, retry: 0, skipped: 0 });
    expect(counts.done).toBe(10);
    expect(sent).toEqual(payments.map((p) => `resolve ${p.gid}`));
  });

  it("a claim no pass renews any more (its instance died) expires, and another instance's pass takes the message over", async () => {
    const payment = await paidWithResolve();
    await opened.db.outboxMessage.updateMany({ data: { lockedBy: "dead-instance/pass", lockedUntil: new Date(clock.now().getTime() + 30_000) } });
    const sent: string[] = [];
    const other = () => deliverDueMessages(instance(everyShop(recordingClient(sent))), { worker: "instance-b", limit: 50, concurrency: 8 });

    expect(await other()).toMatchObject({ done: 0 });
    offsetMs += 30_001;
    expect(await other()).toMatchObject({ done: 1 });
    expect(sent).toEqual([`resolve ${payment.gid}`]);
  });

  it("one shop whose Shopify calls hang until they time out takes a share of a pass, and another shop's resolve goes in the same pass", async () => {
    const hanging = await anotherShop();
    // 60 paid payments of a shop whose Shopify calls time out (15 s each), stored first.
    for (let i = 0; i < 60; i++) await paidWithResolve(hanging);
    offsetMs += 1_000;
    const waiting = await paidWithResolve();
    const sent: string[] = [];
    const hangingCalls: string[] = [];
    const directory: ShopifyDirectory = {
      forShop: async (shopDomain) =>
        shopDomain === hanging.shopDomain
          ? recordingClient(hangingCalls, async () => {
              // 15 s a call, 8 calls at once: the pass's clock moves 15/8 s a call.
              offsetMs += 15_000 / 8;
              return timedOut();
            })
          : recordingClient(sent),
    };
    // The production batch and concurrency.
    const counts = await deliverDueMessages(instance(directory), { worker: "instance-a", limit: 50, concurrency: 8 });

    expect({ delivered: sent, hangingCalls: hangingCalls.length }).toEqual({ delivered: [`resolve ${waiting.gid}`], hangingCalls: 10 });
    expect(counts).toEqual({ done: 1, failed: 0, retry: 10, skipped: 0 });
    expect(await opened.db.outboxMessage.findUniqueOrThrow({ where: { dedupeKey: finalMessageKey(waiting.id) } })).toMatchObject({ status: "done" });
  });

  it("a call that timed out is not tried again while the pass that tried it still runs, and is given back when the pass ends", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const hanging = await anotherShop();
    const payments = [];
    for (let i = 0; i < 3; i++) payments.push(await paidWithResolve(hanging));
    const sent: string[] = [];
    let calls = 0;
    let other: Record<string, number> | null = null;
    // One call at a time, each timing out after 15 s; another instance's pass runs during the
    // third, 30 s after the first timed out (long after its backoff of about a second).
    const hangs = recordingClient(sent, async () => {
      await elapse(15_000, "instance-a");
      if (++calls === 3) other = await deliverDueMessages(instance(everyShop(recordingClient(sent))), { worker: "instance-b", limit: 50, concurrency: 8 });
      return timedOut();
    });
    const counts = await deliverDueMessages(instance(everyShop(hangs)), { worker: "instance-a", limit: 50, concurrency: 1 });

    expect(other).toEqual({ done: 0, failed: 0, retry: 0, skipped: 0 });
    expect(counts).toEqual({ done: 0, failed: 0, retry: 3, skipped: 0 });
    expect(sent).toEqual(payments.map((p) => `resolve ${p.gid}`));
    const messages = await opened.db.outboxMessage.findMany({ where: { shopDomain: hanging.shopDomain } });
    expect(messages.map(({ status, attempts, lockedBy, lockedUntil }) => ({ status, attempts, lockedBy, lockedUntil }))).toEqual(
      payments.map(() => ({ status: "pending", attempts: 1, lockedBy: null, lockedUntil: null })),
    );
    expect(messages.every((m) => m.lastError?.includes("15000 ms"))).toBe(true);
  });

  it("a pass shared between shops still sends each payment's pending before its resolve, the resolve left for the next pass when the shop's share ends between them", async () => {
    const other = await anotherShop();
    const stored: { shop: string; gid: string }[] = [];
    async function pendingThenResolve(shop: { shopDomain: string; id: string }) {
      const payment = await opened.db.payment.create({ data: paymentColumns(shop.id, { state: "paid" }) });
      await opened.db.$transaction(async (tx) => {
        const now = clock.now();
        const pendingExpiresAt = new Date(now.getTime() + 86_400_000).toISOString();
        await enqueue(tx, { shopDomain: shop.shopDomain, paymentId: payment.id, dedupeKey: `pending:${payment.id}`, payload: { kind: "payment.pending", gid: payment.gid, reason: "BUYER_ACTION_REQUIRED", pendingExpiresAt }, now });
        await enqueue(tx, { shopDomain: shop.shopDomain, paymentId: payment.id, dedupeKey: finalMessageKey(payment.id), payload: { kind: "payment.resolve", gid: payment.gid }, now });
      });
      stored.push({ shop: shop.shopDomain, gid: payment.gid });
    }
    const own = { shopDomain: SHOP, id: opened.shopId };
    await pendingThenResolve(own);
    await pendingThenResolve(own);
    await pendingThenResolve(other);
    const sent: string[] = [];
    const deliver = () => deliverDueMessages(instance(everyShop(recordingClient(sent, () => new Promise((resolve) => setImmediate(resolve))))), { worker: "instance-a", concurrency: 8, perShop: 3 });

    // Three of the first shop's four messages, both of the other shop's.
    expect(await deliver()).toMatchObject({ done: 5 });
    expect(await deliver()).toMatchObject({ done: 1 });
    for (const { gid } of stored) expect(sent.filter((call) => call.endsWith(gid))).toEqual([`pending ${gid}`, `resolve ${gid}`]);
  });

  it("a shop's share holds while another shop has calls due, or once its calls were tried before; a pass that took a whole share says more may be due, so the worker runs the next at once", async () => {
    const sent: string[] = [];
    const deps = instance(everyShop(recordingClient(sent)));
    const pass = () => deliveryPass(deps, { worker: "instance-a", concurrency: 8 });
    // A burst of new payments of one shop, alone: one full pass.
    for (let i = 0; i < 15; i++) await paidWithResolve();
    expect(await pass()).toMatchObject({ counts: { done: 15 }, more: false });
    // With another shop's call due: ten of the first shop's, the other's, then the rest at once.
    for (let i = 0; i < 15; i++) await paidWithResolve();
    await paidWithResolve(await anotherShop());
    expect(await pass()).toMatchObject({ counts: { done: 11 }, more: true });
    expect(await pass()).toMatchObject({ counts: { done: 5 }, more: false });
    // One shop alone whose calls were tried before (they may hang): its share.
    for (let i = 0; i < 15; i++) await paidWithResolve();
    await opened.db.outboxMessage.updateMany({ where: { status: "pending" }, data: { attempts: 1 } });
    expect(await pass()).toMatchObject({ counts: { done: 10 }, more: true });
    expect(await pass()).toMatchObject({ counts: { done: 5 }, more: false });
    expect(sent).toHaveLength(46);
  });

  it("a call that timed out, kept by its still running pass, is not told to be on its way: a shopper's return or \"Check now\" sends it once it is due", async () => {
    const shop = await anotherShop();
    const [a, b] = [await paidWithResolve(shop), await paidWithResolve(shop)];
    offsetMs += 1;
    const c = await paidWithResolve(shop);
    const sent: string[] = [];
    const inline = () => instance(everyShop(recordingClient(sent)));
    const answers: Record<string, string | null> = {};
    // One call at a time: a's and b's time out; during c's, a's shopper comes back before and
    // after a's backoff (about a second), and the merchant asks to check b now.
    const directory = everyShop(
      recordingClient(sent, async (gid) => {
        if (gid !== c.gid) return timedOut();
        answers.returnBeforeDue = await deliverNow(inline(), (await opened.db.outboxMessage.findUniqueOrThrow({ where: { dedupeKey: finalMessageKey(a.id) } })).id);
        answers.checkNow = await retryFinalCallNow(inline(), b.id);
        offsetMs += 5_000;
        answers.returnWhenDue = await deliverNow(inline(), (await opened.db.outboxMessage.findUniqueOrThrow({ where: { dedupeKey: finalMessageKey(a.id) } })).id);
      }),
    );
    const counts = await deliverDueMessages(instance(directory), { worker: "instance-a", concurrency: 1 });

    expect(answers).toEqual({ returnBeforeDue: "skipped", checkNow: "done", returnWhenDue: "done" });
    expect(counts).toEqual({ done: 1, failed: 0, retry: 2, skipped: 0 });
    expect(sent).toEqual([`resolve ${a.gid}`, `resolve ${b.gid}`, `resolve ${c.gid}`, `resolve ${b.gid}`, `resolve ${a.gid}`]);
    const messages = await opened.db.outboxMessage.findMany({ where: { shopDomain: shop.shopDomain } });
    expect(messages.map(({ status, lockedBy }) => ({ status, lockedBy }))).toEqual([a, b, c].map(() => ({ status: "done", lockedBy: null })));
  });

  it("one shop whose calls hang holds at most half a pass's slots at once: another shop's messages in the pass go while its calls hang", async () => {
    const hanging = await anotherShop();
    const other = await anotherShop();
    for (let i = 0; i < 6; i++) await paidWithResolve(hanging);
    offsetMs += 1;
    for (let i = 0; i < 6; i++) await paidWithResolve(other);
    const events: string[] = [];
    let othersSent: () => void = () => undefined;
    // The hanging shop's calls time out once the other shop's six are sent, or after 1 s.
    const allOthersSent = new Promise<void>((resolve) => (othersSent = resolve));
    const hang = Promise.race([allOthersSent, new Promise((resolve) => setTimeout(resolve, 1_000))]);
    const directory: ShopifyDirectory = {
      forShop: async (shopDomain) =>
        shopDomain === hanging.shopDomain
          ? recordingClient([], async () => {
              await hang;
              events.push("timed out");
              return timedOut();
            })
          : recordingClient([], async () => {
              events.push("other shop's call");
              if (events.filter((event) => event === "other shop's call").length === 6) othersSent();
            }),
    };
    const counts = await deliverDueMessages(instance(directory), { worker: "instance-a", concurrency: 4 });

    expect(counts).toEqual({ done: 6, failed: 0, retry: 6, skipped: 0 });
    expect(events.slice(0, 6)).toEqual(Array.from({ length: 6 }, () => "other shop's call"));
  });

  it("a pass whose crashed delivery cannot be given back (the database failed) waits for its calls still on their way, and no call is sent twice", async () => {
    const other = await anotherShop();
    const slow = await paidWithResolve();
    offsetMs += 1;
    const crashing = await paidWithResolve(other);
    const sent: string[] = [];
    let answerSlow: () => void = () => undefined;
    const slowAnswered = new Promise<void>((resolve) => (answerSlow = resolve));
    const client = recordingClient(sent, async (gid) => {
      if (gid === crashing.gid) throw new Error("the client crashed");
      if (sent.filter((call) => call === `resolve ${gid}`).length === 1) await slowAnswered;
    });
    // The database fails the crashed delivery's give-back (a dropped connection, say).
    let giveBackFailed: () => void = () => undefined;
    const failedGiveBack = new Promise<void>((resolve) => (giveBackFailed = resolve));
    const outboxMessage = new Proxy(opened.db.outboxMessage, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver) as (...args: unknown[]) => unknown;
        if (key !== "updateMany") return typeof value === "function" ? value.bind(target) : value;
        return (args: { data: { lastError?: string } }) => {
          if (args.data.lastError === undefined) return value.call(target, args);
          giveBackFailed();
          return Promise.reject(new Error("connection lost"));
        };
      },
    });
    const failing = { ...instance(everyShop(client)), db: new Proxy(opened.db, { get: (target, key) => (key === "outboxMessage" ? outboxMessage : (Reflect.get(target, key) as unknown)) }) };

    const pass = deliverDueMessages(failing, { worker: "instance-a", concurrency: 4 });
    const ended = pass.then(
      (counts) => counts,
      (error: unknown) => error,
    );
    await failedGiveBack;
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 200))]);
    // The slow call is still on its way to Shopify; another instance's pass runs meanwhile.
    const otherPass = await deliverDueMessages(instance(everyShop(client)), { worker: "instance-b", concurrency: 4 });
    answerSlow();

    const passEnded = await ended;
    expect([slow, crashing].map((p) => sent.filter((call) => call === `resolve ${p.gid}`).length)).toEqual([1, 1]);
    expect({ pass: passEnded, otherPass }).toEqual({
      pass: { done: 1, failed: 0, retry: 1, skipped: 0 },
      otherPass: { done: 0, failed: 0, retry: 0, skipped: 0 },
    });
    // The crashed call's claim, which could not be given back, expires.
    const left = await opened.db.outboxMessage.findUniqueOrThrow({ where: { dedupeKey: finalMessageKey(crashing.id) } });
    expect({ status: left.status, claimed: left.lockedBy?.startsWith("instance-a/") }).toEqual({ status: "pending", claimed: true });
    expect(await opened.db.outboxMessage.findUniqueOrThrow({ where: { dedupeKey: finalMessageKey(slow.id) } })).toMatchObject({ status: "done", lockedBy: null });
  });

  it("a pass that delivers one message makes three statements: the claim's choice and update, and the delivery's record", async () => {
    const payment = await paidWithResolve();
    const statements: string[] = [];
    const counted = <T extends object>(target: T, name: string): T =>
      new Proxy(target, {
        get(t, key, receiver) {
          const value = Reflect.get(t, key, receiver) as unknown;
          if (typeof value !== "function") return value;
          return (...args: unknown[]) => {
            statements.push(`${name}.${String(key)}`);
            return (value as (...a: unknown[]) => unknown).apply(t, args);
          };
        },
      });
    const db = new Proxy(opened.db, {
      get(t, key) {
        const value = Reflect.get(t, key) as unknown;
        return typeof key === "string" && !key.startsWith("$") && typeof value === "object" && value !== null ? counted(value, key) : value;
      },
    });
    const sent: string[] = [];
    const deps = { ...instance(everyShop(recordingClient(sent))), db, sql: counted(opened.sql, "sql") } as unknown as PaymentsDeps;

    expect((await deliveryPass(deps, { worker: "instance-a", concurrency: 8 })).counts).toMatchObject({ done: 1 });
    expect(sent).toEqual([`resolve ${payment.gid}`]);
    expect(statements).toEqual(["sql.query", "outboxMessage.updateManyAndReturn", expect.stringMatching(/^sql\./)]);
  });

  it("a shop alone in a pass takes every slot: the half-concurrency cap holds only while another shop's calls wait", async () => {
    for (let i = 0; i < 8; i++) await paidWithResolve();
    let inFlight = 0;
    let most = 0;
    const sent: string[] = [];
    const client = recordingClient(sent, async () => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 30));
      inFlight--;
    });
    expect(await deliverDueMessages(instance(everyShop(client)), { worker: "instance-a", concurrency: 4 })).toMatchObject({ done: 8 });
    expect(most).toBe(4);
  });
  /** A client that answers as `during` says, or accepts. */
  const client = (during: (gid: string) => Promise<PaymentsAppsResult | void>) => recordingClient([], during);

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
