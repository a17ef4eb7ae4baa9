// The admin's reads of payments: the filtered list, one payment's detail (timeline,
// transactions, Shopify's side) and the payments that need a person, each turned into a
// plain view model the page renders as is.
import { createHash } from "node:crypto";
import type { Database } from "~/db/database.server";
import type { Payment, Prisma } from "../../generated/prisma/sqlite/client";
import { attentionAdvice } from "./attention";
import { formatDateTime, formatMoney, formatPercentage } from "./format";
import { beyondCursor, cursorText, PAGE_SIZE, paymentWhere, type PageCursor, type PaymentFilters } from "./payment-filters";
import { paidPercentage } from "~/payment-page/progress";
import { gatewayStatusWords, paymentStateWords, type Tone } from "./status-words";
import { describeEvent } from "./timeline";
import { webhookBody } from "~/payments/process-webhooks";
import { receivedFiatShown } from "~/gateway/money";
import { refusalKeptFromItsFlag } from "~/payments/outbox";
import { flagColumns, flagEvent } from "~/payments/attention-flags";
import { lastRead, notifiedStatuses, reportsAnotherStatus } from "./notified-status.server";

export interface PaymentRow {
  id: string;
  shopifyPaymentId: string;
  amount: string;
  coin: string;
  stateLabel: string;
  stateTone: Tone;
  gatewayStatus: string;
  gatewayStatusLabel: string;
  percentage: string;
  test: boolean;
  createdAt: string;
  updatedAt: string;
  needsAttention: boolean;
  /** Paid at the gateway, and Shopify was told it is not (a second payment of a checkout): its crypto is the shopper's. */
  notPaidInShopify: boolean;
  /**
   * The status a signed notification reported since the order's last read, in words with its
   * code ("Awaiting Completion (AC)"), when it is not the status shown; null otherwise.
   */
  notifiedStatus: string | null;
}

function coinText(payment: Pick<Payment, "inputCurrency" | "cryptoAmount">): string {
  if (!payment.inputCurrency) return "—";
  return payment.cryptoAmount ? `${payment.cryptoAmount} ${payment.inputCurrency}` : payment.inputCurrency;
}

/** Paid at the gateway while Shopify was told it is not: not the shop's money. */
export function isNotPaidInShopify(payment: Pick<Payment, "state" | "shopifyOutcome">): boolean {
  return payment.state === "paid" && payment.shopifyOutcome === "rejected";
}

function row(payment: Payment, notified: string | null): PaymentRow {
  const state = paymentStateWords(payment.state);
  return {
    id: payment.id,
    shopifyPaymentId: payment.shopifyPaymentId,
    amount: formatMoney(payment.amount, payment.currency),
    coin: coinText(payment),
    stateLabel: state.label,
    stateTone: state.tone,
    gatewayStatus: payment.gatewayStatus ?? "",
    gatewayStatusLabel: gatewayStatusWords(payment.gatewayStatus).label,
    percentage: formatPercentage(payment.percentage),
    test: payment.test,
    createdAt: formatDateTime(payment.createdAt),
    updatedAt: formatDateTime(payment.updatedAt),
    needsAttention: payment.attention !== null && payment.attentionResolvedAt === null,
    notPaidInShopify: isNotPaidInShopify(payment),
    notifiedStatus: notified === null ? null : `${gatewayStatusWords(notified).label} (${notified})`,
  };
}

export interface PaymentList {
  rows: PaymentRow[];
  total: number;
  /** Which of the `total` payments the page shows: "26–50 of 60" (empty when it shows none). */
  shown: string;
  /** Cursors (`cursorText`) for the pages of newer and of older payments; null at either end. */
  newerCursor: string | null;
  olderCursor: string | null;
}

const NEWEST_FIRST: Prisma.PaymentOrderByWithRelationInput[] = [{ createdAt: "desc" }, { id: "desc" }];
const OLDEST_FIRST: Prisma.PaymentOrderByWithRelationInput[] = [{ createdAt: "asc" }, { id: "asc" }];

/** One page of the shop's payments matching `filters`, newest first, starting at `cursor` (none: the first page). */
export async function listPayments(db: Database, shopId: string, filters: PaymentFilters, cursor?: PageCursor): Promise<PaymentList> {
  const where = await paymentWhere(db, shopId, filters);
  const payments = await pageOfPayments(db, where, cursor);
  const total = await db.payment.count({ where });
  const first = payments[0];
  const last = payments.at(-1);
  const newer = first ? await db.payment.count({ where: { AND: [where, beyondCursor({ direction: "before", createdAt: first.createdAt, id: first.id })] } }) : 0;
  const notified = await notifiedStatuses(db, shopId, payments);
  return {
    rows: payments.map((payment) => row(payment, notified(payment))),
    total,
    shown: payments.length > 0 ? `${newer + 1}–${newer + payments.length} of ${total}` : "",
    newerCursor: first && newer > 0 ? cursorText(first) : null,
    olderCursor: last && newer + payments.length < total ? cursorText(last) : null,
  };
}

/**
 * The payments of the page at `cursor`. Fewer than a page before the cursor means the start
 * of the list, and nothing after it (its payments gone, or a cursor past the end) has no page
 * to show: both show the first page instead.
 */
async function pageOfPayments(db: Database, where: Prisma.PaymentWhereInput, cursor: PageCursor | undefined): Promise<Payment[]> {
  if (cursor?.direction === "after") {
    const older = await db.payment.findMany({ where: { AND: [where, beyondCursor(cursor)] }, orderBy: NEWEST_FIRST, take: PAGE_SIZE });
    if (older.length > 0) return older;
  } else if (cursor) {
    // Read from the cursor towards the newest, then put back in the list's order.
    const newer = await db.payment.findMany({ where: { AND: [where, beyondCursor(cursor)] }, orderBy: OLDEST_FIRST, take: PAGE_SIZE });
    if (newer.length === PAGE_SIZE) return newer.reverse();
  }
  return db.payment.findMany({ where, orderBy: NEWEST_FIRST, take: PAGE_SIZE });
}

export interface PaymentDetail {
  id: string;
  shopifyPaymentId: string;
  amount: string;
  test: boolean;
  environment: string;
  createdAt: string;
  updatedAt: string;
  state: { label: string; meaning: string; tone: Tone };
  gateway: {
    orderId: string | null;
    status: string | null;
    statusLabel: string;
    statusMeaning: string;
    statusTone: Tone;
    coin: string;
    received: string;
    percentage: string;
    address: string | null;
    tagMemo: string | null;
    expiresAt: string;
    lastCheckedAt: string;
    /**
     * What signed notifications told since the order was last read, when the figures above do
     * not show it yet: a notification that needs nothing from Shopify (NR, PE, AC) is not read
     * at once, and a final one that agrees with the payment settles it without a read.
     */
    notified: string | null;
  };
  shopify: { outcome: string; state: string | null; nextAction: string; nextActionUrl: string | null; finalizedAt: string };
  attention: { reason: string; title: string; detail: string; whatToDo: string; resolvedAt: string | null; flag: string } | null;
  customer: { name: string | null; email: string | null };
  timeline: { id: string; at: string; title: string; description: string }[];
  transactions: { txHash: string; amount: string; confirmed: boolean; block: string | null; seenAt: string }[];
  canCheck: boolean;
}

function shopifySide(payment: Payment): PaymentDetail["shopify"] {
  const finalizedAt = formatDateTime(payment.finalizedAt);
  switch (payment.shopifyOutcome) {
    case "resolved":
      return {
        outcome: "Paid in Shopify",
        state: payment.shopifyState,
        // An open flag (the gateway's record disagreeing, crypto for a voided authorization...) says what to do before shipping.
        nextAction:
          payment.attention !== null && payment.attentionResolvedAt === null
            ? "Shopify shows the order as paid, but this payment needs attention: read what to do above before shipping."
            : "Nothing to do: Shopify shows the order as paid.",
        nextActionUrl: payment.nextActionUrl,
        finalizedAt,
      };
    case "rejected":
      return { outcome: "Not paid in Shopify", state: payment.shopifyState, nextAction: "Nothing to do unless it needs attention: the shopper was offered another way to pay.", nextActionUrl: payment.nextActionUrl, finalizedAt };
    case "pending":
      return {
        outcome: "Pending in Shopify",
        state: payment.shopifyState,
        // Ended at the gateway: what is left is Shopify's side.
        nextAction: payment.state === "paid" || payment.state === "failed" ? untoldNextAction(payment.state) : "Waiting for the gateway; the app tells Shopify the outcome when the payment completes or ends.",
        nextActionUrl: payment.nextActionUrl,
        finalizedAt,
      };
    default:
      return { outcome: "Shopify not told yet", state: payment.shopifyState, nextAction: untoldNextAction(payment.state), nextActionUrl: payment.nextActionUrl, finalizedAt };
  }
}

/** What a payment Shopify has no outcome for waits for, by its state. */
function untoldNextAction(state: string): string {
  switch (state) {
    case "paid":
    case "failed":
      return "The outcome is queued for Shopify and will be sent shortly.";
    case "confirming":
      // Crypto reached the order (all of it or part: the state's meaning says which); the network has yet to confirm it.
      return "Crypto reached the gateway order and waits for network confirmation; the app tells Shopify the outcome when the gateway completes or ends the payment.";
    case "not_started":
      // Final: Shopify's request to start the payment was answered with an error, so there is no outcome to send.
      return "Nothing to do: the payment never started. Shopify got an error answer when it asked to start it, and the shopper can pay again from checkout.";
    default:
      return "The shopper has not finished paying yet.";
  }
}

/**
 * The words for a signed notification newer than the order's last read, whose status the page's
 * figures (coin, amounts, transactions) do not show yet; null when they do.
 */
function notifiedSinceRead(
  payment: Pick<Payment, "gatewayStatus" | "lastCheckedAt" | "createdAt" | "unverifiedSince">,
  newest: { status: string | null; receivedAt: Date; rawBody: string } | null,
): string | null {
  if (!newest?.status || newest.receivedAt.getTime() <= lastRead(payment).getTime()) return null;
  if (newest.status === payment.gatewayStatus && payment.unverifiedSince === null) return null;
  const words = gatewayStatusWords(newest.status);
  return `A signed notification of ${formatDateTime(newest.receivedAt)} reports ${words.label} (${newest.status})${notifiedAmounts(newest.rawBody)}. The coin, amounts and transactions shown are from the order's last read: Check now reads the order at once, or the app reads it within the hour.`;
}

/** A sentence to follow a colon: its first letter in lower case (the state's words start with a common word). */
function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

/** What a notification's own body says of the crypto (its coin and amounts, as the gateway wrote them); "" when it says nothing usable. */
function notifiedAmounts(rawBody: string): string {
  const body = webhookBody({ rawBody });
  if (!body?.currency) return "";
  const parts = [
    body.crypto_amount ? `${body.crypto_amount} ${body.currency} asked` : null,
    body.confirmed_amount !== undefined ? `${body.confirmed_amount} confirmed` : null,
    body.unconfirmed_amount !== undefined ? `${body.unconfirmed_amount} unconfirmed` : null,
  ].filter((part): part is string => part !== null);
  return parts.length > 0 ? `, in ${body.currency}: ${parts.join(", ")}` : `, in ${body.currency}`;
}

export async function paymentDetail(db: Database, shopId: string, paymentId: string): Promise<PaymentDetail | null> {
  const payment = await db.payment.findFirst({
    where: { id: paymentId, shopId },
    include: { events: { orderBy: [{ at: "asc" }, { id: "asc" }] }, transactions: { orderBy: { seenAt: "asc" } } },
  });
  if (!payment) return null;
  const newestNotification = payment.gatewayOrderId
    ? await db.gatewayWebhook.findFirst({
        where: { shopId, gatewayEnv: payment.gatewayEnv, orderId: payment.gatewayOrderId, status: { not: null } },
        orderBy: { receivedAt: "desc" },
        select: { status: true, receivedAt: true, rawBody: true },
      })
    : null;
  const state = paymentStateWords(payment.state, { percentage: payment.percentage, cryptoAmount: payment.cryptoAmount, transactions: payment.transactions });
  const status = gatewayStatusWords(payment.gatewayStatus, { fundsSeen: payment.transactions.length > 0 || paidPercentage(payment.percentage) !== null });
  const advice = payment.attention ? attentionAdvice(payment.attention) : null;
  const notified = notifiedSinceRead(payment, newestNotification);
  // The state's words are the last read's: said so beside a notification of another status.
  const meaning = newestNotification !== null && reportsAnotherStatus(payment, newestNotification) ? `As of the order's last read: ${lowerFirst(state.meaning)}` : state.meaning;
  return {
    id: payment.id,
    shopifyPaymentId: payment.shopifyPaymentId,
    amount: formatMoney(payment.amount, payment.currency),
    test: payment.test,
    environment: payment.gatewayEnv === "sandbox" ? "Gateway sandbox" : "Live gateway",
    createdAt: formatDateTime(payment.createdAt),
    updatedAt: formatDateTime(payment.updatedAt),
    state: { label: state.label, meaning, tone: state.tone },
    gateway: {
      orderId: payment.gatewayOrderId,
      status: payment.gatewayStatus,
      statusLabel: status.label,
      statusMeaning: status.meaning,
      statusTone: status.tone,
      coin: coinText(payment),
      // The gateway states received_amount in the order's fiat, not in the coin.
      received: formatMoney(payment.receivedAmount === null ? null : receivedFiatShown(payment.receivedAmount, payment.currency), payment.currency),
      percentage: formatPercentage(payment.percentage),
      address: payment.address,
      tagMemo: payment.tagMemo,
      expiresAt: formatDateTime(payment.expiresAt),
      lastCheckedAt: formatDateTime(payment.lastCheckedAt),
      notified,
    },
    shopify: shopifySide(payment),
    attention:
      payment.attention && advice
        ? {
            reason: payment.attention,
            title: advice.title,
            detail: payment.attentionDetail ?? "",
            whatToDo: advice.whatToDo,
            resolvedAt: payment.attentionResolvedAt ? formatDateTime(payment.attentionResolvedAt) : null,
            flag: flagSeen(payment, payment.events.filter((event) => event.type === HANDLED_EVENT).length),
          }
        : null,
    customer: { name: payment.customerName, email: payment.customerEmail },
    timeline: payment.events.map((event) => ({ id: event.id, at: formatDateTime(event.at), ...describeEvent(event.type, event.detail, payment) })),
    transactions: payment.transactions.map((t) => ({ txHash: t.txHash, amount: formatMoney(t.amount, t.currency), confirmed: t.confirmed, block: t.block === null ? null : t.block.toString(), seenAt: formatDateTime(t.seenAt) })),
    canCheck: payment.gatewayOrderId !== null,
  };
}

export interface AttentionItem {
  id: string;
  shopifyPaymentId: string;
  amount: string;
  reason: string;
  title: string;
  detail: string;
  whatToDo: string;
  gatewayStatusLabel: string;
  updatedAt: string;
  /** Names the flag shown, for "Mark as handled" (see `flagSeen`). */
  flag: string;
}

/** The attention page shows at most this many flags at once, the latest first. */
export const ATTENTION_PAGE_LIMIT = 200;

/** The flagged payments the page shows (the latest first), and how many there are in all. */
export async function paymentsNeedingAttention(db: Database, shopId: string): Promise<{ items: AttentionItem[]; total: number }> {
  const [payments, total] = await Promise.all([
    db.payment.findMany({ where: { shopId, attention: { not: null }, attentionResolvedAt: null }, orderBy: { updatedAt: "desc" }, take: ATTENTION_PAGE_LIMIT }),
    countNeedingAttention(db, shopId),
  ]);
  const handled = await timesHandled(
    db,
    payments.map((payment) => payment.id),
  );
  const items = payments.map((payment) => {
    const advice = attentionAdvice(payment.attention ?? "");
    return {
      id: payment.id,
      shopifyPaymentId: payment.shopifyPaymentId,
      amount: formatMoney(payment.amount, payment.currency),
      reason: payment.attention ?? "",
      title: advice.title,
      detail: payment.attentionDetail ?? "",
      whatToDo: advice.whatToDo,
      gatewayStatusLabel: gatewayStatusWords(payment.gatewayStatus).label,
      updatedAt: formatDateTime(payment.updatedAt),
      flag: flagSeen(payment, handled.get(payment.id) ?? 0),
    };
  });
  return { items, total };
}

export function countNeedingAttention(db: Database, shopId: string): Promise<number> {
  return db.payment.count({ where: { shopId, attention: { not: null }, attentionResolvedAt: null } });
}

/**
 * Names a payment's flag as the merchant saw it: its reason, what it says, and how many of the
 * payment's flags were marked handled before it. A payment has one flag at a time, and a newer
 * one (a late payment after an underpayment, new amounts) replaces it, so "Mark as handled"
 * carries this to close only the flag it was shown for. The count tells apart a flag raised
 * again in the same words once the last one was handled (more crypto after a rejection, say):
 * a page shown before, or a press sent again, does not close it.
 */
export function flagSeen(payment: Pick<Payment, "attention" | "attentionDetail">, timesHandled: number): string {
  return createHash("sha256")
    .update(`${payment.attention ?? ""}\n${payment.attentionDetail ?? ""}\n${timesHandled}`)
    .digest("base64url")
    .slice(0, 22);
}

/** How many times each of these payments' flags were marked handled (see flagSeen). */
async function timesHandled(db: Pick<Database, "paymentEvent">, paymentIds: string[]): Promise<Map<string, number>> {
  if (paymentIds.length === 0) return new Map();
  const counts = await db.paymentEvent.groupBy({ by: ["paymentId"], where: { paymentId: { in: paymentIds }, type: HANDLED_EVENT }, _count: { _all: true } });
  return new Map(counts.map((row) => [row.paymentId, row._count._all]));
}

/** The payment's flag as the admin names it now (flagSeen). */
export async function currentFlag(db: Pick<Database, "paymentEvent">, payment: Pick<Payment, "id" | "attention" | "attentionDetail">): Promise<string> {
  return flagSeen(payment, (await timesHandled(db, [payment.id])).get(payment.id) ?? 0);
}

/** The timeline entry of a flag marked handled. */
export const HANDLED_EVENT = "attention_handled";

/** What the entry of a flag marked handled holds: the flag's reason (the health page tells from it which refusals were dealt with). */
export function handledDetail(reason: string): string {
  return JSON.stringify({ reason });
}

export type MarkHandledResult = "handled" | "nothing_to_handle" | "flag_changed";

/** Marks the flag the merchant saw (`flag`, from `flagSeen`) as handled, only while it is still the payment's open flag. */
export async function markAttentionHandled(db: Database, shopId: string, paymentId: string, flag: string, now: Date): Promise<MarkHandledResult> {
  return db.$transaction(async (tx) => {
    // The payment's row first (a write that changes nothing; on SQLite the transaction holds the
    // database): a press, a flag raised again and another press then land one after another, so
    // the flag compared is the one closed, and a press sent twice finds it handled.
    await tx.$executeRaw`UPDATE "Payment" SET "id" = "id" WHERE "id" = ${paymentId} AND "shopId" = ${shopId}`;
    const open = await tx.payment.findFirst({
      where: { id: paymentId, shopId, attention: { not: null }, attentionResolvedAt: null },
      select: { id: true, attention: true, attentionDetail: true },
    });
    if (!open) return "nothing_to_handle";
    if ((await currentFlag(tx, open)) !== flag) return "flag_changed";
    await tx.payment.update({ where: { id: paymentId }, data: { attentionResolvedAt: now } });
    await tx.paymentEvent.create({ data: { paymentId, type: HANDLED_EVENT, detail: handledDetail(open.attention!), at: now } });
    // A refund, capture or void answer Shopify refused while this flag was open raised no flag
    // of its own: it takes the slot now, so that it is not lost with the flag handled.
    const payment = await tx.payment.findUniqueOrThrow({ where: { id: paymentId }, select: { id: true, shopId: true, shopifyPaymentId: true } });
    const refused = await refusalKeptFromItsFlag(tx, payment);
    if (refused) {
      await tx.payment.update({ where: { id: paymentId }, data: flagColumns(refused) });
      await tx.paymentEvent.create({ data: { paymentId, ...flagEvent(refused, now) } });
    }
    return "handled";
  });
}

/** What the admin answers a "Mark as handled", and with which status. */
export function markHandledAnswer(result: MarkHandledResult): { ok: boolean; message: string; status: number } {
  switch (result) {
    case "handled":
      return { ok: true, message: "Marked as handled.", status: 200 };
    case "nothing_to_handle":
      return { ok: false, message: "That payment has nothing left to handle.", status: 409 };
    case "flag_changed":
      return { ok: false, message: "This payment was flagged again since the page was shown, for the reason now on the page: read it before marking it as handled.", status: 409 };
  }
}
