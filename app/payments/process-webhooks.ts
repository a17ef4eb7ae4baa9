// Flow 4, behind the door: stored gateway webhooks are processed from the inbox. A
// webhook that reports a final status for an open payment, consistently with what the app
// asked the gateway for, settles it at once without a gateway call (its signature was
// verified at the door with the shop's Secret Key); the next listing of the shop's orders
// checks it (reconcile.ts). Anything else is only a trigger: the order is read from the
// gateway (one call per shop and environment for a whole batch), then settled. Claims are
// atomic, so any number of workers (and a restart after a crash) process each webhook once.
//
// The gateway does not deduplicate its webhooks, and it may keep an order's final status when
// crypto arrives after it (a payment after EX is recorded under EX, with a new edited_at). So a
// webhook that repeats a settled payment's status is dropped without a read only when it
// repeats what the app has seen: the same identifier, status, edited_at and amounts as a
// webhook already processed, or an edited_at no later than the order version the app last read.
import { randomUUID } from "node:crypto";
import Decimal from "decimal.js";
import pMap from "p-map";
import type { GatewayWebhook, Payment } from "../../generated/prisma/sqlite/client";
import { tryParseGatewayJson } from "~/gateway/json-numbers";
import { gatewayWebhookPayloadSchema, type GatewayWebhookPayload } from "~/gateway/schemas";
import { backoffMs, type BackoffPolicy } from "~/lib/backoff";
import { whileRenewing } from "~/lib/renewal";
import { beganOnRetiredCredentials } from "~/shops/credential-columns";
import { orderReaderAccess } from "~/shops/gateway-directory.server";
import { isFinalGatewayStatus, type ParsedGatewayStatus } from "~/gateway/statuses";
import type { GatewayEnv, PaymentsDeps } from "./deps";
import { isOpenPaymentState } from "./payment-state";
import { readGatewayOrders } from "./read-orders";
import { passOnToPaymentShops } from "./shared-device-webhooks";
import { settleFromGatewayOrder, settleFromSignedWebhook, type ReportedCoin } from "./settle-payment";

const CLAIM_MS = 30_000;
/** Webhooks whose processing failed (gateway read refused, order not known yet): 2 s doubling to 5 min. */
const INBOX_BACKOFF: BackoffPolicy = { baseMs: 2_000, capMs: 300_000 };
/** Statuses that ask nothing of Shopify (the status mapping's "wait" and "confirming"). */
const NO_ACTION_STATUSES = new Set(["NR", "PE", "AC"]);
/** How long a webhook for an order we do not know yet is kept, in case its creation answer is still being stored. */
const UNKNOWN_ORDER_GRACE_MS = 10 * 60_000;
/**
 * A webhook whose processing still fails this long after it came is given up: marked processed
 * with why, and logged as an error. Its payment is the reconciler's, which reads the order of
 * every open payment on its own (and finalises it before Shopify's pending window closes); kept
 * on, it would be tried every 5 minutes for good, each time with a gateway read.
 */
export const INBOX_GIVE_UP_MS = 24 * 3_600_000;
/**
 * Payments one pass settles at once, so a burst of webhooks is not settled one round trip
 * after another. A settlement holds a pool connection (DATABASE_POOL_SIZE, 10 by default,
 * shared with the requests) for one statement on PostgreSQL, so a waiting request waits for
 * one statement at most, not for a whole transaction.
 */
const SETTLE_CONCURRENCY = 8;
/** The note of a webhook processed without its order: the gateway's read did not return it. */
const UNREAD_ORDER_NOTE = "the gateway's read did not return this order";
/** The note of a webhook for an order no payment of its shop has. */
const NOT_THIS_SHOPS_ORDER_NOTE = "no payment of this shop has that gateway order";
/** The note of a webhook passed on to the shop whose payment has its order (shared-device-webhooks.ts); that shop is not named. */
const PASSED_ON_NOTE = "passed on to another shop's payment on the same device";

export interface InboxPassResult {
  processed: number;
  retried: number;
  duplicates: number;
}

type KnownStatus = Extract<ParsedGatewayStatus, { known: true }>;

/** The parsed body of a stored webhook; null when it does not parse. */
export function webhookBody(hook: Pick<GatewayWebhook, "rawBody">): GatewayWebhookPayload | null {
  const json = tryParseGatewayJson(hook.rawBody);
  if (!json.ok) return null;
  const parsed = gatewayWebhookPayloadSchema.safeParse(json.value);
  return parsed.success ? parsed.data : null;
}

/**
 * The known status a stored webhook reports for this payment's order, when it carries the
 * order's fiat amount and every field it carries agrees with the payment (the order, amount
 * and fiat the app asked for); null when it does not parse, reports a status this project
 * does not know, or disagrees.
 */
export function agreedStatus(hook: Pick<GatewayWebhook, "rawBody" | "orderId">, payment: Pick<Payment, "gatewayOrderId" | "amount" | "currency">): KnownStatus | null {
  const body = webhookBody(hook);
  return body ? agreedBodyStatus(body, hook, payment) : null;
}

/** agreedStatus of a webhook whose body is parsed already (webhookBody). */
export function agreedBodyStatus(body: GatewayWebhookPayload, hook: Pick<GatewayWebhook, "orderId">, payment: Pick<Payment, "gatewayOrderId" | "amount" | "currency">): KnownStatus | null {
  if (body.identifier !== payment.gatewayOrderId || hook.orderId !== payment.gatewayOrderId) return null;
  const status = body.status;
  if (!status?.known) return null;
  // The gateway's webhooks always carry the order's fiat amount: one without it is read instead.
  if (body.fiat_amount === undefined || !new Decimal(body.fiat_amount).equals(new Decimal(payment.amount))) return null;
  if (body.fiat_currency !== undefined && body.fiat_currency.toUpperCase() !== payment.currency.toUpperCase()) return null;
  return status;
}

/** What a stored webhook reports that an open payment is settled on without a read. */
export interface TrustedFinalReport {
  status: KnownStatus;
  /** Null when it names no coin. */
  coin: ReportedCoin | null;
}

/**
 * The final status a stored webhook reports for this open payment (agreedStatus), with the
 * coin and crypto amount it reports; null when the order must be read from the gateway instead.
 */
export function trustedFinalReport(hook: Pick<GatewayWebhook, "rawBody" | "orderId">, payment: Pick<Payment, "gatewayOrderId" | "amount" | "currency">): TrustedFinalReport | null {
  const body = webhookBody(hook);
  const status = body && agreedBodyStatus(body, hook, payment);
  if (!body || !status || !isFinalGatewayStatus(status.code)) return null;
  return { status, coin: body.currency ? { currency: body.currency, cryptoAmount: body.crypto_amount ?? null } : null };
}

/**
 * What tells one webhook of an order from another: its status, the order's edited_at it
 * reports, and the amounts it reports. Not every version of the gateway sends edited_at; the
 * amounts still tell crypto that arrived after the order's final status from a repeat.
 */
function webhookKey(hook: Pick<GatewayWebhook, "rawBody" | "orderId" | "status">): string {
  const body = webhookBody(hook);
  const editedAt = body?.edited_at === undefined ? null : new Date(body.edited_at).getTime();
  const amounts = [body?.unconfirmed_amount, body?.confirmed_amount, body?.received_amount].map((amount) => (amount === undefined ? null : new Decimal(amount).toString()));
  return JSON.stringify([hook.orderId, hook.status, editedAt, ...amounts]);
}

/**
 * Of webhooks that report the status their settled payment already shows, those that bring
 * nothing new: an order version no later than the one last read (its edited_at), or the same
 * identifier, status and edited_at as a webhook already processed or an earlier one of the
 * batch. One query for the batch, no gateway call.
 */
async function repeatedWebhooks(deps: PaymentsDeps, shopId: string, env: GatewayEnv, hooks: GatewayWebhook[], byOrder: Map<string, Payment>): Promise<Set<string>> {
  const repeated = new Set<string>();
  const open: GatewayWebhook[] = [];
  for (const hook of hooks) {
    const editedAt = webhookBody(hook)?.edited_at;
    const readVersion = byOrder.get(hook.orderId!)?.gatewayEditedAt ?? null;
    if (editedAt !== undefined && readVersion !== null && new Date(editedAt).getTime() <= readVersion.getTime()) repeated.add(hook.id);
    else open.push(hook);
  }
  if (open.length === 0) return repeated;
  const pairs = [...new Map(open.map((hook) => [`${hook.orderId}|${hook.status}`, { orderId: hook.orderId, status: hook.status }])).values()];
  const processed = await deps.db.gatewayWebhook.findMany({
    where: { shopId, gatewayEnv: env, processedAt: { not: null }, AND: [{ OR: pairs }, { OR: [{ lastError: null }, { lastError: { not: UNREAD_ORDER_NOTE } }] }] },
    select: { orderId: true, status: true, rawBody: true },
  });
  const seen = new Set(processed.map(webhookKey));
  for (const hook of open) {
    const key = webhookKey(hook);
    if (seen.has(key)) repeated.add(hook.id);
    else seen.add(key);
  }
  return repeated;
}

/**
 * Claims up to `limit` due webhooks with one conditional update that returns the rows it
 * won (marked with the pass's own claim id), so a concurrent worker (or the pass of another
 * instance) never gets the same row, and a crashed pass's claims expire after CLAIM_MS.
 */
async function claimDue(deps: PaymentsDeps, worker: string, limit: number): Promise<GatewayWebhook[]> {
  const now = deps.clock.now();
  // Due as the claim is written too: another instance may have tried one since the select and
  // put it back to wait out its backoff (the gateway throttled its read).
  const claimable = { processedAt: null, nextAttemptAt: { lte: now }, OR: [{ lockedUntil: null }, { lockedUntil: { lt: now } }] };
  const due = await deps.db.gatewayWebhook.findMany({
    where: claimable,
    orderBy: { receivedAt: "asc" },
    take: limit,
    select: { id: true },
  });
  if (due.length === 0) return [];
  const claimId = `${worker}/${randomUUID()}`;
  const claimed = await deps.db.gatewayWebhook.updateManyAndReturn({
    where: { ...claimable, id: { in: due.map((d) => d.id) } },
    data: { lockedBy: claimId, lockedUntil: new Date(now.getTime() + CLAIM_MS), attempts: { increment: 1 } },
  });
  return claimed.sort((a, b) => a.receivedAt.getTime() - b.receivedAt.getTime());
}

/**
 * The webhooks of `hooks` (claimed together) that the pass still holds, their claim renewed for
 * another CLAIM_MS. A claim with more than half its term left is held (only a lapsed claim is
 * ever taken over), and costs no statement.
 */
async function stillHeld(deps: PaymentsDeps, hooks: GatewayWebhook[]): Promise<GatewayWebhook[]> {
  const until = hooks[0]?.lockedUntil ?? null;
  if ((hooks[0]?.lockedBy ?? null) === null || until === null) return [];
  if (until.getTime() - deps.clock.now().getTime() > CLAIM_MS / 2) return hooks;
  const { held, lockedUntil } = await renewClaim(deps, hooks);
  return hooks.filter((hook) => held.has(hook.id)).map((hook) => ({ ...hook, lockedUntil }));
}

/** Extends the claim on those of `hooks` the pass still holds and has not processed yet: which, and until when. */
async function renewClaim(deps: PaymentsDeps, hooks: GatewayWebhook[]): Promise<{ held: Set<string>; lockedUntil: Date }> {
  const claim = hooks[0]?.lockedBy ?? null;
  const lockedUntil = new Date(deps.clock.now().getTime() + CLAIM_MS);
  if (claim === null) return { held: new Set(), lockedUntil };
  const renewed = await deps.db.gatewayWebhook.updateManyAndReturn({
    where: { id: { in: hooks.map((hook) => hook.id) }, lockedBy: claim, processedAt: null },
    data: { lockedUntil },
    select: { id: true },
  });
  return { held: new Set(renewed.map((row) => row.id)), lockedUntil };
}

// Both write only while the pass still holds the claim (`claim`, the pass's lockedBy): a pass
// slowed past CLAIM_MS (a gateway read waiting out 429s) leaves a webhook another pass has
// claimed since to that pass, instead of overwriting its claim or outcome.

async function markProcessed(deps: PaymentsDeps, claim: string | null, ids: string[], note: string | null): Promise<void> {
  if (ids.length === 0 || claim === null) return;
  await deps.db.gatewayWebhook.updateMany({ where: { id: { in: ids }, lockedBy: claim }, data: { processedAt: deps.clock.now(), lockedUntil: null, lockedBy: null, lastError: note } });
}

async function retryLater(deps: PaymentsDeps, claim: string | null, hooks: GatewayWebhook[], reason: string): Promise<void> {
  if (claim === null) return;
  const now = deps.clock.now();
  const givenUp = hooks.filter((hook) => now.getTime() - hook.receivedAt.getTime() > INBOX_GIVE_UP_MS);
  for (const hook of givenUp) {
    deps.logger.error("Webhook given up: its processing kept failing", { shopId: hook.shopId, webhookId: hook.id, orderId: hook.orderId, attempts: hook.attempts, reason });
    await markProcessed(deps, claim, [hook.id], `given up after ${hook.attempts} attempts (the reconciler reads the order): ${reason}`);
  }
  for (const hook of hooks) {
    if (givenUp.includes(hook)) continue;
    const delay = backoffMs(hook.attempts, INBOX_BACKOFF);
    await deps.db.gatewayWebhook.updateMany({
      where: { id: hook.id, lockedBy: claim },
      data: { lockedUntil: null, lockedBy: null, lastError: reason, nextAttemptAt: new Date(deps.clock.now().getTime() + delay) },
    });
  }
}

export async function processWebhookInbox(deps: PaymentsDeps, options: { worker: string; limit?: number }): Promise<InboxPassResult> {
  const result: InboxPassResult = { processed: 0, retried: 0, duplicates: 0 };
  const hooks = await claimDue(deps, options.worker, options.limit ?? 100);
  const groups = Map.groupBy(hooks, (hook) => `${hook.shopId}|${hook.gatewayEnv}`);
  for (const claimed of groups.values()) {
    // An earlier group may have waited on the gateway past this one's claim, and another pass
    // may have claimed and processed its webhooks since: only those still held are processed.
    const group = await stillHeld(deps, claimed);
    if (group.length === 0) continue;
    const first = group[0]!;
    try {
      // The group's claim is renewed while it is worked: its gateway read may wait out retries
      // and the device's quota past the claim's term, and another pass would then read the same
      // orders again.
      const outcome = await whileRenewing(
        () => renewClaim(deps, group),
        CLAIM_MS / 3,
        (error) => deps.logger.warn("Could not renew a webhook pass's claim", { shopId: first.shopId, error }),
        () => processGroup(deps, first.shopId, first.gatewayEnv as GatewayEnv, group),
      );
      result.processed += outcome.processed;
      result.retried += outcome.retried;
      result.duplicates += outcome.duplicates;
    } catch (error) {
      deps.logger.error("Webhook processing failed", { shopId: first.shopId, error });
      await retryLater(deps, first.lockedBy, group, error instanceof Error ? error.message : String(error));
      result.retried += group.length;
    }
  }
  return result;
}

/** The webhooks of a group whose payment's settlement threw, each payment's logged once, to be tried again later. */
class FailedSettlements {
  private readonly hooks = new Map<string, { hook: GatewayWebhook; reason: string }>();

  constructor(
    private readonly deps: PaymentsDeps,
    private readonly shopId: string,
  ) {}

  add(paymentId: string, hooks: GatewayWebhook[], error: unknown): void {
    const reason = `settling the payment failed: ${error instanceof Error ? error.message : String(error)}`;
    this.deps.logger.error("Settling a payment from its webhooks failed; they are tried again later", { shopId: this.shopId, paymentId, error });
    for (const hook of hooks) this.hooks.set(hook.id, { hook, reason });
  }

  holds(hookId: string): boolean {
    return this.hooks.has(hookId);
  }

  /** Puts the failed webhooks back to wait (or gives up those too old); how many. */
  async retryLater(claim: string | null): Promise<number> {
    for (const [reason, entries] of Map.groupBy(this.hooks.values(), (entry) => entry.reason)) {
      await retryLater(
        this.deps,
        claim,
        entries.map((entry) => entry.hook),
        reason,
      );
    }
    return this.hooks.size;
  }
}

async function processGroup(deps: PaymentsDeps, shopId: string, env: GatewayEnv, hooks: GatewayWebhook[]): Promise<InboxPassResult> {
  const outcome: InboxPassResult = { processed: 0, retried: 0, duplicates: 0 };
  // Every webhook of the pass was claimed under the same id.
  const claim = hooks[0]?.lockedBy ?? null;
  const shop = await deps.db.shop.findUnique({ where: { id: shopId } });
  const access = shop ? orderReaderAccess(deps.gateways, shop, env) : null;
  if (!shop || !access) {
    await markProcessed(deps, claim, hooks.map((h) => h.id), "shop has no credentials for this environment any more");
    outcome.processed += hooks.length;
    return outcome;
  }
  const orderIds = [...new Set(hooks.map((h) => h.orderId).filter((id): id is string => id !== null))];
  const payments = await deps.db.payment.findMany({ where: { shopId, gatewayEnv: env, gatewayOrderId: { in: orderIds } } });
  const byOrder = new Map(payments.map((p) => [p.gatewayOrderId!, p]));

  // No read (the gateway quota is precious) for repeats of what a settled payment already
  // shows, nor for statuses that need nothing from Shopify: the shopper's return and the
  // reconciler read those orders when it matters. A settled status with a new edited_at is
  // news (crypto after EX, say) and is read: the reconciler never reads a settled payment again.
  const needRead: GatewayWebhook[] = [];
  const settledStatus: GatewayWebhook[] = [];
  const noAction: string[] = [];
  for (const hook of hooks) {
    const payment = hook.orderId ? byOrder.get(hook.orderId) : undefined;
    const open = payment !== undefined && isOpenPaymentState(payment.state);
    if (payment && !open && hook.status === payment.gatewayStatus) settledStatus.push(hook);
    else if (open && hook.status !== null && NO_ACTION_STATUSES.has(hook.status)) noAction.push(hook.id);
    else needRead.push(hook);
  }
  const repeated = await repeatedWebhooks(deps, shopId, env, settledStatus, byOrder);
  const duplicates = settledStatus.filter((hook) => repeated.has(hook.id)).map((hook) => hook.id);
  needRead.push(...settledStatus.filter((hook) => !repeated.has(hook.id)));
  await markProcessed(deps, claim, duplicates, "duplicate of a settled status");
  await markProcessed(deps, claim, noAction, "status needs no Shopify action; read on return or reconciliation");
  outcome.duplicates += duplicates.length;
  outcome.processed += noAction.length;

  const known: GatewayWebhook[] = [];
  const trusted: { hook: GatewayWebhook; payment: Payment; report: TrustedFinalReport }[] = [];
  const unknown: GatewayWebhook[] = [];
  for (const hook of needRead) {
    const payment = hook.orderId ? byOrder.get(hook.orderId) : undefined;
    if (!payment) {
      unknown.push(hook);
      continue;
    }
    // A shop that asked for it has every final status read from the gateway first, and so has
    // a payment begun on credentials the merchant removed or replaced (perhaps because they
    // leaked): a notification of it is verified with their Secret Key, which is not taken at
    // its word. The read goes to the gateway with their device key, as the reconciler's do.
    // So has a payment a read found to be for an order of other terms (its fiat or amount): a
    // notification that agrees with the payment does not outweigh the gateway's own record.
    const trustsSigned = !shop.readOrderOnWebhook && !beganOnRetiredCredentials(shop, payment.gatewayEnv as GatewayEnv, payment) && payment.attention !== "amount_mismatch";
    const report = isOpenPaymentState(payment.state) && trustsSigned ? trustedFinalReport(hook, payment) : null;
    if (report) trusted.push({ hook, payment, report });
    else known.push(hook);
  }
  // An order no payment of this shop has may be another shop's on the same device, whose
  // notifications come here: asked only for these, so the shop's own notifications cost nothing
  // more. One passed on is done with here. One not passed on is handled as one of an order no
  // shop has (waited for, then done with), whoever has it: a shop can sign a notification
  // itself, and how it is handled must not tell it whether another shop has that order.
  const passedOn = new Set(unknown.length === 0 ? [] : await passOnToPaymentShops(deps, shop, env, unknown));
  await markProcessed(deps, claim, [...passedOn], PASSED_ON_NOTE);
  outcome.processed += passedOn.size;
  const ofNoPayment = unknown.filter((h) => !passedOn.has(h.id));
  const now = deps.clock.now();
  const expired = ofNoPayment.filter((h) => now.getTime() - h.receivedAt.getTime() > UNKNOWN_ORDER_GRACE_MS);
  await markProcessed(deps, claim, expired.map((h) => h.id), NOT_THIS_SHOPS_ORDER_NOTE);
  outcome.processed += expired.length;
  const waiting = ofNoPayment.filter((h) => !expired.includes(h));
  if (waiting.length) {
    await retryLater(deps, claim, waiting, "gateway order not known yet");
    outcome.retried += waiting.length;
  }

  // Marked processed together after the batch: a crash in between only means settling again,
  // which finds the payment final and reads the order instead. Payments are settled side by
  // side, each payment's webhooks one after the other.
  const settledIds: string[] = [];
  const duplicateIds: string[] = [];
  // A payment whose settlement fails (a write the database refuses, a row that kept changing)
  // holds back its own webhooks only: they are tried again later, the others are done with.
  const failures = new FailedSettlements(deps, shopId);
  await pMap(
    Map.groupBy(trusted, (entry) => entry.payment.id).values(),
    async (entries) => {
      // What tells the webhook that settled the payment from a later one of the batch
      // (webhookKey): its repeat is a duplicate, but one with the same status and a new version
      // of the order (crypto paid after EX, in the same batch) is read like any other.
      let settledKey: string | null = null;
      for (const [index, { hook, payment, report }] of entries.entries()) {
        if (settledKey !== null && webhookKey(hook) === settledKey) {
          duplicateIds.push(hook.id);
          continue;
        }
        let settled: Awaited<ReturnType<typeof settleFromSignedWebhook>>;
        try {
          settled = settledKey === null ? await settleFromSignedWebhook(deps, { payment, shopDomain: shop.shopDomain }, { identifier: payment.gatewayOrderId!, ...report }) : null;
        } catch (error) {
          failures.add(payment.id, entries.slice(index).map((entry) => entry.hook), error);
          return;
        }
        if (settled) {
          settledKey = webhookKey(hook);
          settledIds.push(hook.id);
        } else {
          // Settled meanwhile (another webhook, a return, the reconciler): a read decides what this one means.
          known.push(hook);
        }
      }
    },
    { concurrency: SETTLE_CONCURRENCY },
  );
  await markProcessed(deps, claim, settledIds, null);
  await markProcessed(deps, claim, duplicateIds, "duplicate of a settled status");
  outcome.processed += settledIds.length;
  outcome.duplicates += duplicateIds.length;
  if (known.length === 0) {
    outcome.retried += await failures.retryLater(claim);
    return outcome;
  }

  const wanted = [...new Set(known.map((h) => h.orderId!))].map((id) => byOrder.get(id)!).map((p) => ({ gatewayOrderId: p.gatewayOrderId!, createdAt: p.createdAt }));
  const readAt = deps.clock.now();
  const read = await readGatewayOrders(access, wanted, readAt);
  if (read.isErr()) {
    await retryLater(deps, claim, known, `gateway read failed: ${read.error.kind}`);
    outcome.retried += known.length + (await failures.retryLater(claim));
    return outcome;
  }
  const orders = read.value;
  await pMap(
    new Set(known.map((h) => h.orderId!)),
    async (orderId) => {
      const order = orders.get(orderId);
      if (!order) return;
      const paymentId = byOrder.get(orderId)!.id;
      try {
        await settleFromGatewayOrder(deps, paymentId, order, "webhook", readAt);
      } catch (error) {
        failures.add(
          paymentId,
          known.filter((h) => h.orderId === orderId),
          error,
        );
      }
    },
    { concurrency: SETTLE_CONCURRENCY },
  );
  const done = known.filter((h) => !failures.holds(h.id));
  // A webhook whose order the read did not return (an order of the merchant's earlier device,
  // which the listing leaves out) says so: the reconciler looks such orders up while their
  // payments are open or recently rejected, and a repeat of it is read again, not dropped.
  await markProcessed(deps, claim, done.filter((h) => orders.has(h.orderId!)).map((h) => h.id), null);
  await markProcessed(deps, claim, done.filter((h) => !orders.has(h.orderId!)).map((h) => h.id), UNREAD_ORDER_NOTE);
  outcome.processed += done.length;
  outcome.retried += await failures.retryLater(claim);
  return outcome;
}
