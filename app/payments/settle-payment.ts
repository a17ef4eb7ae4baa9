// Settles a payment from what the app learns of its gateway order: records what the
// gateway says, moves the state machine forward (never back), flags what a person must
// see, and stores the one final Shopify call (resolve or reject) in the outbox, exactly
// once per payment whatever order observations arrive in and however many instances run.
//
// Two kinds of observation: an authoritative read (GET /orders/info or a listing), and a
// signed webhook reporting a final status for an open payment. The second settles without
// spending a gateway call and marks the payment unverified; the reconciler's next listing
// of the shop's orders checks it and flags any disagreement for a person.
//
// Observations arrive out of order (a shopper's return reading the order while its final
// webhook is settled, a listing racing the inbox), so each is first placed against what the
// payment already shows. The gateway only moves an order forward (NR, PE, AC, then one final
// status it keeps) and stamps every change with edited_at: a read of an older version, or of
// a status behind the stored one, is stale and changes nothing. A final status that only a
// signed webhook reported is the exception: a read asked for after it was acted on that does
// not show it contradicts it, and a person is told.
//
// A settlement is decided here, in memory, from the payment's row as it was read, and
// written in one step (settlement-rows) only while the row is still that version; when
// another writer got there first, it is decided again from a fresh read.
import type { GatewayOrder } from "~/gateway/schemas";
import { isGatewayStatus, parseGatewayStatus, type GatewayStatus, type ParsedGatewayStatus } from "~/gateway/statuses";
import type { Payment } from "../../generated/prisma/sqlite/client";
import { INSTANCE_CLOCK_ALLOWANCE_MS, type PaymentsDeps } from "./deps";
import { finalMessageKey, type OutboxPayload } from "./outbox";
import { writeSettlement, type SettledColumns, type SettledTransaction, type SettlementWrite } from "./settlement-rows.server";
import { isFinalPaymentState, isPaymentState, nextState, stateForDecision, type PaymentState } from "./payment-state";
import { orderTermsMismatch } from "./order-terms";
import { decideForGatewayStatus, decideForOrderTerms, decideForParsedStatus, overpaymentDetail, statusShowsFundsReceived, type SettlementDecision } from "./status-mapping";
import { flagColumns, type AttentionFlag } from "./attention-flags";

export type SettleSource = "webhook" | "signed_webhook" | "return" | "reconcile" | "check" | "create";

/** What the app knows of a gateway order. */
export type GatewayObservation =
  /** readAt: when the read was asked for (the app's clock, taken before the call). */
  | { kind: "read"; order: GatewayOrder; readAt: Date }
  /**
   * A verified webhook's final status: only the identifier and the status are relied on. The
   * coin it reports is shown until a read of the order replaces it.
   */
  | { kind: "signed_webhook"; identifier: string; status: Extract<ParsedGatewayStatus, { known: true }>; coin?: ReportedCoin | null };

/** The coin and crypto amount a signed webhook reports for its order. */
export interface ReportedCoin {
  currency: string;
  cryptoAmount: string | null;
}

/** The webhook claimed one thing and the gateway's own record shows another. */
function mismatchDetail(claimed: string | null, read: GatewayStatus | string): string {
  return `A signed gateway webhook reported status ${claimed ?? "(none)"}, but the gateway's order now shows ${read}. Compare the order in the gateway dashboard with Shopify before shipping or refunding.`;
}

/** The payment was marked paid, and the gateway's order has ended unpaid since. */
function paidThenEndedUnpaidDetail(code: string): string {
  return `Shopify was told this payment was paid (on a signed gateway webhook the gateway's record has since contradicted), but the gateway's order now shows ${code}: it ended unpaid. Compare the order in the gateway dashboard with Shopify before shipping or refunding.`;
}

export interface SettleResult {
  payment: Payment;
  /** What the payment's gateway status means: the observation's, or the stored one's when the observation was stale. */
  decision: SettlementDecision;
  /** The payment's final Shopify call in the outbox, when this settlement made the payment final. */
  finalMessage: { id: string } | null;
}

export class PaymentOrderMismatchError extends Error {
  override name = "PaymentOrderMismatchError";
}

function stateOf(payment: Payment): PaymentState {
  if (!isPaymentState(payment.state)) throw new Error(`payment ${payment.id} has an unknown state`);
  return payment.state;
}

/** Whether the gateway status the payment already stores shows crypto received. */
export function storedStatusShowsFunds(payment: Pick<Payment, "gatewayStatus">): boolean {
  return isGatewayStatus(payment.gatewayStatus) && statusShowsFundsReceived(payment.gatewayStatus);
}

/** Whether the gateway status the payment already stores completes an order (CO, CM). */
function storedStatusCompletes(payment: Pick<Payment, "gatewayStatus">): boolean {
  return isGatewayStatus(payment.gatewayStatus) && decideForGatewayStatus(payment.gatewayStatus).kind === "resolve";
}

/** Statuses that end an order without paying it: money on such an order arrived after it ended, or is held by it. */
const ENDED_UNPAID = new Set<string>(["EX", "CA", "DE"]);

/**
 * The flag of a payment rejected because its order ended unpaid (expired, cancelled, or deleted
 * by the merchant) while the order shows crypto the shopper sent: a person must return it or
 * arrange the order with the shopper.
 */
function endedHoldingFunds(code: string): { reason: "late_payment"; detail: string } {
  return {
    reason: "late_payment",
    detail: `The gateway order ended unpaid (status ${code}) holding crypto the shopper sent. Refund it from the gateway dashboard or arrange the order with the shopper.`,
  };
}

function attentionFor(
  payment: Payment,
  current: PaymentState,
  order: GatewayOrder,
  decision: SettlementDecision,
  knownTransactions: ReadonlySet<string>,
  voidedAt: Date | null,
  termsMismatch: string | null,
): AttentionFlag | null {
  const afterVoid = paidAfterVoid(payment, decision, order.status.code, voidedAt);
  if (afterVoid) return afterVoid;
  // An order that is not for the payment's fiat and amount, flagged as soon as a read shows it
  // (before the shopper pays, when it can), once for what differs, handled or not. A rejection
  // tells Shopify nothing was paid, which stands whatever the order's terms: its own flags speak.
  if (termsMismatch !== null && decision.kind !== "reject") {
    return payment.attention === "amount_mismatch" && payment.attentionDetail === termsMismatch ? null : { reason: "amount_mismatch", detail: termsMismatch };
  }
  if (decision.kind === "review") {
    // The same unknown status flagged before (handled or not) is not flagged again at every read.
    if (payment.attention === decision.attention && payment.gatewayStatus === order.status.code) return null;
    return { reason: decision.attention, detail: decision.detail };
  }
  if (decision.kind === "reject" && decision.attention && current !== "failed") {
    return { reason: decision.attention, detail: decision.merchantMessage };
  }
  // A payment Shopify was told is paid whose order the gateway now shows ended unpaid with no
  // flag of its own (FA, EX, CA, DE). The gateway keeps the first final status it reaches, so
  // only a signed completion its record contradicted since leads here; that flag may be
  // handled, and Shopify still shows the order paid. Flagged once for each status shown.
  if (decision.kind === "reject" && current === "paid") {
    return payment.gatewayStatus === order.status.code ? null : { reason: "webhook_mismatch", detail: paidThenEndedUnpaidDetail(order.status.code) };
  }
  const late = {
    reason: "late_payment" as const,
    detail: `Crypto arrived after the payment was rejected (gateway status ${order.status.code}). Refund it from the gateway dashboard or arrange the order with the shopper.`,
  };
  // Rejected by this read while the order already shows money: paid after it expired or was
  // cancelled (the gateway keeps the status), or held by an order the merchant deleted. A read
  // that verifies a signed webhook's reject, under the same status, is judged the same way: a
  // webhook carries no transactions, so the ones this read lists were never stored, and are
  // not new (a failed transaction of an FA order is no money; an expired order's was there
  // when it ended). Unless a late payment is already flagged and not yet handled.
  const verifiesSignedReject = current === "failed" && payment.unverifiedSince !== null && payment.gatewayStatus === order.status.code;
  if (decision.kind === "reject" && (current !== "failed" || verifiesSignedReject)) {
    // Not again over a late payment still open, nor over the one the signed webhook raised for
    // the money its order held, which the merchant may have handled (refunded) since.
    if (payment.attention === "late_payment" && (payment.attentionResolvedAt === null || verifiesSignedReject)) return null;
    return order.status.known && ENDED_UNPAID.has(order.status.code) && order.transactions.length > 0 ? endedHoldingFunds(order.status.code) : null;
  }
  // Money that arrives after the Shopify session was rejected: a person must act. The gateway
  // may list it as a new transaction under the same final status, or move to a status that
  // shows funds. It takes the payment's one flag over any other (the timeline keeps the
  // earlier one), unless a late payment is already flagged and not yet handled, or this read
  // verifies a signed webhook's reject whose own flag (underpaid, out of condition) already
  // speaks for the money shown: its transactions were never stored, so they are not new. An
  // order that completes after it was rejected with money already shown (AC when Shopify's
  // window closed) is news too, the crypto now the merchant's to return or arrange, unless
  // that money was flagged a late payment already (open or handled): the person knows of it.
  const fundsShown = order.status.known && statusShowsFundsReceived(order.status.code);
  const fundsShownBefore = storedStatusShowsFunds(payment);
  const completedNow = decision.kind === "resolve" && fundsShownBefore && !storedStatusCompletes(payment) && payment.attention !== "late_payment";
  const lateFlagOpen = payment.attention === "late_payment" && payment.attentionResolvedAt === null;
  const verifiesOwnFlag = payment.unverifiedSince !== null && decision.kind === "reject" && decision.attention !== undefined && payment.attention === decision.attention;
  const newMoney = order.transactions.some((t) => !knownTransactions.has(t.tx_hash)) || (fundsShown && !fundsShownBefore) || completedNow;
  if (current === "failed" && !lateFlagOpen && !verifiesOwnFlag && newMoney) return late;
  if (decision.kind === "resolve" && current !== "failed" && current !== "not_started") return overpaidFlag(payment, order);
  return null;
}

/**
 * Crypto paid to an authorization Shopify voided, with the app's consent: the gateway order
 * stays open after a void (the gateway has no way to cancel it), so a shopper can still pay
 * it. Shopify is told as for any payment, but the money is the shopper's and the order must
 * not ship: a person is told over any other flag (the timeline keeps the earlier one), once,
 * when the money first shows (a void accepted while the stored status showed money was flagged
 * then: follow-up-sessions). Money shown is a status on its way to paid or paid; an underpaid
 * or late order's own flag already says to refund it.
 */
function paidAfterVoid(payment: Payment, decision: SettlementDecision, status: string, voidedAt: Date | null): { reason: "paid_after_void"; detail: string } | null {
  if (voidedAt === null) return null;
  if (decision.kind !== "confirming" && decision.kind !== "resolve") return null;
  if (storedStatusShowsFunds(payment)) return null;
  return {
    reason: "paid_after_void",
    detail: `Shopify voided this authorization on ${voidedAt.toISOString()}, and crypto arrived at the gateway since (status ${status}). It belongs to the shopper: refund it from the gateway dashboard before anything ships.`,
  };
}

/**
 * An order that ends paid with more than its amount: still paid, but the extra is the
 * shopper's, and a person decides whether to return it. Flagged once for the amounts shown
 * (a later read showing the same is not flagged again, handled or not), and never over
 * another flag still open, whose advice stands (a later read raises it once that one is
 * handled).
 */
function overpaidFlag(payment: Payment, order: GatewayOrder): { reason: "overpaid"; detail: string } | null {
  const detail = overpaymentDetail(order);
  if (detail === null) return null;
  if (payment.attention === "overpaid" && payment.attentionDetail === detail) return null;
  if (payment.attention !== null && payment.attention !== "overpaid" && payment.attentionResolvedAt === null) return null;
  return { reason: "overpaid", detail };
}

/** Settles from an authoritative read of the order, asked for at `readAt` (the clock before the call). */
export function settleFromGatewayOrder(deps: PaymentsDeps, paymentId: string, order: GatewayOrder, source: SettleSource, readAt: Date): Promise<SettleResult> {
  return settle(deps, paymentId, { kind: "read", order, readAt }, source).then((result) => result!);
}

/** A payment row as the caller read it, with its shop's domain. */
export interface SeenPayment {
  payment: Payment;
  shopDomain: string;
}

/**
 * Settles an open payment from a verified webhook's final status, without a gateway call,
 * first from the row the caller read (a fresh read only when it changed since).
 * Null when the payment is already final: a read must decide what a late status means.
 */
export function settleFromSignedWebhook(
  deps: PaymentsDeps,
  seen: SeenPayment,
  observation: Omit<Extract<GatewayObservation, { kind: "signed_webhook" }>, "kind">,
): Promise<SettleResult | null> {
  return settle(deps, seen.payment.id, { kind: "signed_webhook", ...observation }, "signed_webhook", seen);
}

/** What a settlement is decided on. */
interface SettlementBasis extends SeenPayment {
  /**
   * The hashes of the on-chain transactions the app knows of the payment: read with the row,
   * for a gateway read to tell a new transaction from one listed again (or listed twice).
   */
  knownTransactions?: ReadonlySet<string>;
  /** When the app accepted Shopify's void of the authorization (null when it did not): read after the row. */
  voidedAt?: Date | null;
}

async function readBasis(deps: PaymentsDeps, paymentId: string): Promise<SettlementBasis> {
  const row = await deps.db.payment.findUnique({
    where: { id: paymentId },
    include: { shop: { select: { shopDomain: true } }, transactions: { select: { txHash: true } } },
  });
  if (!row) throw new Error(`payment ${paymentId} not found`);
  const { shop, transactions, ...payment } = row;
  return { payment, shopDomain: shop.shopDomain, knownTransactions: new Set(transactions.map((t) => t.txHash)) };
}

/**
 * When the app accepted a void of the payment (null for none, and for a sale, which has no
 * void). Read after the payment's row: an acceptance gives the row a new version in the
 * same transaction (follow-up-sessions), so one that lands after this read fails the
 * settlement's write, which is then decided again on a fresh read.
 */
async function voidAcceptedAt(deps: PaymentsDeps, payment: Payment): Promise<Date | null> {
  if (payment.kind !== "authorization") return null;
  const accepted = await deps.db.sessionRequest.findFirst({
    where: { shopId: payment.shopId, paymentShopifyId: payment.shopifyPaymentId, kind: "void", status: { in: ["resolving", "resolved"] } },
    orderBy: { createdAt: "asc" },
    select: { createdAt: true },
  });
  return accepted?.createdAt ?? null;
}

/** The gateway's non-final statuses in the one order it moves through them; every final status comes after them. */
const OPEN_GATEWAY_PROGRESS: Partial<Record<GatewayStatus, number>> = { NR: 0, PE: 1, AC: 2 };
const FINAL_GATEWAY_PROGRESS = 3;

/** How far along the gateway's one-way path a status is; null for none, or a code this app does not know. */
function gatewayProgress(code: string | null): number | null {
  if (code === null) return null;
  const status = parseGatewayStatus(code);
  if (!status.known) return null;
  return status.info.final ? FINAL_GATEWAY_PROGRESS : (OPEN_GATEWAY_PROGRESS[status.code] ?? null);
}

/**
 * How a read stands against what the payment shows: "stale" when it shows an older version
 * of the order (nothing to write), "contradicts" when the gateway's record disagrees with a
 * final status a signed webhook reported, "news" otherwise.
 */
function standingOfRead(payment: Payment, order: GatewayOrder, readAt: Date): "stale" | "contradicts" | "news" {
  if (payment.gatewayEditedAt !== null && new Date(order.edited_at).getTime() < payment.gatewayEditedAt.getTime()) return "stale";
  const stored = gatewayProgress(payment.gatewayStatus);
  const shown = gatewayProgress(order.status.code);
  const behind = stored !== null && shown !== null && shown < stored;
  // The stored status came from the gateway's own record, and the gateway never goes back.
  if (payment.unverifiedSince === null) return behind ? "stale" : "news";
  // The stored status is a signed webhook's final one. A read asked for before the webhook was
  // acted on may simply predate it (the next listing verifies it); one asked for after it that
  // still shows the order open does not back it. The two times come from the clocks of the
  // instances that made the read and settled the webhook: a read asked for within their
  // possible difference is taken as one that may predate it, and left to the next.
  if (behind) return readAt.getTime() < payment.unverifiedSince.getTime() + INSTANCE_CLOCK_ALLOWANCE_MS ? "stale" : "contradicts";
  // Two different final statuses cannot both be the gateway's: it keeps the first it reaches.
  const finalShown = order.status.known && order.status.info.final;
  return finalShown && order.status.code !== payment.gatewayStatus ? "contradicts" : "news";
}

interface Settlement {
  write: SettlementWrite;
  decision: SettlementDecision;
  payment: Payment;
}

/**
 * What the observation makes of the payment as it was seen: the write and the payment after
 * it; "final" when a signed webhook finds it final, "stale" when a read shows less than the
 * payment already does.
 */
function decideSettlement(basis: SettlementBasis, observation: GatewayObservation, source: SettleSource, now: Date): Settlement | "final" | "stale" {
  const { payment } = basis;
  const identifier = observation.kind === "read" ? observation.order.identifier : observation.identifier;
  const status = observation.kind === "read" ? observation.order.status : observation.status;
  if (payment.gatewayOrderId && payment.gatewayOrderId !== identifier) {
    throw new PaymentOrderMismatchError(`payment ${payment.id} belongs to another gateway order`);
  }
  const current = stateOf(payment);
  if (observation.kind === "signed_webhook" && isFinalPaymentState(current)) return "final";
  const standing = observation.kind === "read" ? standingOfRead(payment, observation.order, observation.readAt) : "news";
  if (standing === "stale") return "stale";
  // A read shows the order's fiat and amount: one that is not for the payment's is never paid on.
  const termsMismatch = observation.kind === "read" ? orderTermsMismatch(observation.order, payment) : null;
  const decision = decideForOrderTerms(decideForParsedStatus(status), termsMismatch);
  const next = nextState(current, stateForDecision(decision));

  let attention: AttentionFlag | null;
  let columns: SettledColumns;
  let transactions: SettledTransaction[] = [];
  if (observation.kind === "read") {
    const order = observation.order;
    if (basis.knownTransactions === undefined) throw new Error("a gateway read settles from a row read with its transactions");
    attention =
      standing === "contradicts"
        ? { reason: "webhook_mismatch", detail: mismatchDetail(payment.gatewayStatus, order.status.code) }
        : attentionFor(payment, current, order, decision, basis.knownTransactions, basis.voidedAt ?? null, termsMismatch);
    columns = {
      state: next,
      gatewayStatus: order.status.code,
      gatewayEditedAt: new Date(order.edited_at),
      inputCurrency: order.currency_id,
      cryptoAmount: order.crypto_amount,
      receivedAmount: order.received_amount,
      percentage: order.percentage,
      address: order.address,
      // A read that does not report the memo leaves the one the creation answer gave.
      ...(order.tag_memo === undefined ? {} : { tagMemo: order.tag_memo || null }),
      expiresAt: order.expired_time ? new Date(order.expired_time) : null,
      lastCheckedAt: now,
      unverifiedSince: null,
    };
    transactions = order.transactions.map((transaction) => ({
      txHash: transaction.tx_hash,
      currency: transaction.currency,
      amount: transaction.amount,
      confirmed: transaction.confirmed,
      block: transaction.block === null ? null : BigInt(transaction.block),
      seenAt: new Date(transaction.created_at),
    }));
  } else {
    // A signed webhook that ends the order unpaid after a read showed the shopper's crypto on
    // it (AC): the order holds that money (the merchant deleted it, say), as a read of it would show.
    const holdsFunds = decision.kind === "reject" && current !== "failed" && ENDED_UNPAID.has(status.code) && storedStatusShowsFunds(payment);
    attention =
      paidAfterVoid(payment, decision, status.code, basis.voidedAt ?? null) ??
      (decision.kind === "reject" && decision.attention ? { reason: decision.attention, detail: decision.merchantMessage } : null) ??
      (holdsFunds ? endedHoldingFunds(status.code) : null);
    columns = { state: next, gatewayStatus: status.code, unverifiedSince: now };
    // A payment whose shopper chose the coin on the gateway's page has none stored until a read:
    // the webhook's coin and amount fill the admin's list and export until the verifying read.
    if (payment.inputCurrency === null && observation.coin) {
      columns.inputCurrency = observation.coin.currency;
      columns.cryptoAmount = observation.coin.cryptoAmount ?? payment.cryptoAmount;
    }
  }
  if (attention) Object.assign(columns, flagColumns(attention));
  if (!payment.gatewayOrderId) columns.gatewayOrderId = identifier;

  // The timeline's entries of this settlement, in order.
  const events: { type: string; detail: unknown }[] = [];
  if (payment.gatewayStatus !== status.code) {
    const percentage = observation.kind === "read" ? observation.order.percentage : undefined;
    events.push({ type: "gateway_status", detail: { from: payment.gatewayStatus, to: status.code, source, percentage } });
  }
  if (next !== current) events.push({ type: "state", detail: { from: current, to: next, source } });
  // A read verifies a signed webhook's settlement unless it raises a flag: an overpayment's
  // does not dispute the webhook.
  if (observation.kind === "read" && payment.unverifiedSince !== null && (!attention || attention.reason === "overpaid")) {
    events.push({ type: "verified", detail: { status: status.code, source } });
  }
  if (attention) events.push({ type: "attention", detail: attention });

  let message: SettlementWrite["message"] = null;
  if (next !== current && (next === "paid" || next === "failed")) {
    const payload: OutboxPayload =
      decision.kind === "reject"
        ? { kind: "payment.reject", gid: payment.gid, code: decision.code, merchantMessage: decision.merchantMessage }
        : { kind: "payment.resolve", gid: payment.gid };
    message = { shopDomain: basis.shopDomain, kind: payload.kind, dedupeKey: finalMessageKey(payment.id), payload: JSON.stringify(payload) };
  }

  // Always later than the row's own, even within one millisecond: the next writer's guard sees a new version.
  const updatedAt = new Date(Math.max(Date.now(), payment.updatedAt.getTime() + 1));
  return {
    decision,
    payment: { ...payment, ...columns, updatedAt },
    write: {
      paymentId: payment.id,
      seen: { state: payment.state, updatedAt: payment.updatedAt, attention: payment.attention, attentionDetail: payment.attentionDetail, attentionResolvedAt: payment.attentionResolvedAt },
      columns,
      updatedAt,
      events: events.map((event) => ({ type: event.type, detail: JSON.stringify(event.detail) })),
      at: now,
      transactions,
      message,
    },
  };
}

async function settle(deps: PaymentsDeps, paymentId: string, observation: GatewayObservation, source: SettleSource, seen?: SeenPayment): Promise<SettleResult | null> {
  for (let attempt = 0; attempt < 5; attempt++) {
    // Optimistic concurrency: decided from a row, written only while the row is unchanged.
    // After another writer moved it, the same observation is placed against the fresh row,
    // which may show by now that it is stale.
    const read = attempt === 0 && seen ? seen : await readBasis(deps, paymentId);
    const basis = { ...read, voidedAt: await voidAcceptedAt(deps, read.payment) };
    const settlement = decideSettlement(basis, observation, source, deps.clock.now());
    if (settlement === "final") return null;
    if (settlement === "stale") {
      deps.logger.debug("Gateway read older than the payment's record ignored", { paymentId, source });
      return { payment: basis.payment, decision: decideForParsedStatus(parseGatewayStatus(basis.payment.gatewayStatus!)), finalMessage: null };
    }
    const written = await writeSettlement(deps.sql, settlement.write);
    if (!written) continue;
    if (written.messageId) deps.notify?.outbox();
    return { payment: settlement.payment, decision: settlement.decision, finalMessage: written.messageId ? { id: written.messageId } : null };
  }
  throw new Error(`payment ${paymentId} kept changing while it was being settled`);
}
