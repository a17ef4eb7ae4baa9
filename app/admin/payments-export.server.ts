// The shop's payments as a CSV file for the merchant's books: every payment the list's
// filters select, newest first, one row each, with what Shopify was asked for (amount and
// currency, as text: never a float), where the payment stands, and what the gateway took in
// crypto (coin, amounts, the on-chain transactions, and whether they were read from the
// gateway's own record yet). No shopper's personal details: Shopify
// holds those with the order. Read in batches along the list's own order (createdAt, then id,
// a cursor on the last row written), so a shop with any number of payments is streamed in
// bounded memory and payments arriving meanwhile neither repeat nor shift rows.
//
// A spreadsheet runs a cell that starts like a formula: a value from outside the app (a coin
// symbol or transaction hash the gateway sent, say) that starts with =, +, -, @, a tab or a
// carriage return is written with a leading apostrophe, so it reads as the text it is.
import type { Database } from "~/db/database.server";
import type { Prisma } from "../../generated/prisma/sqlite/client";
import { cryptoReceived } from "~/payment-page/progress";
import { notifiedStatuses } from "./notified-status.server";
import { beyondCursor, paymentWhere, type PaymentFilters } from "./payment-filters";

/** How many payments are read at a time. */
export const EXPORT_BATCH = 500;

const exportSelect = {
  id: true,
  createdAt: true,
  updatedAt: true,
  shopifyPaymentId: true,
  kind: true,
  test: true,
  amount: true,
  currency: true,
  state: true,
  shopifyOutcome: true,
  gatewayEnv: true,
  gatewayOrderId: true,
  gatewayStatus: true,
  gatewayEditedAt: true,
  lastCheckedAt: true,
  unverifiedSince: true,
  inputCurrency: true,
  cryptoAmount: true,
  receivedAmount: true,
  percentage: true,
  attention: true,
  attentionResolvedAt: true,
  transactions: { select: { txHash: true, amount: true }, orderBy: { seenAt: "asc" } },
} satisfies Prisma.PaymentSelect;

type ExportedPayment = Prisma.PaymentGetPayload<{ select: typeof exportSelect }> & {
  /** The status a signed notification reported since the order's last read, when another (notified-status). */
  notifiedStatus: string | null;
};

/** The file's columns, in order: a header and how each payment fills it. */
const COLUMNS: readonly [string, (p: ExportedPayment) => string | null][] = [
  ["created_at", (p) => p.createdAt.toISOString()],
  ["updated_at", (p) => p.updatedAt.toISOString()],
  ["shopify_payment_id", (p) => p.shopifyPaymentId],
  ["kind", (p) => p.kind],
  ["test", (p) => String(p.test)],
  ["amount", (p) => p.amount],
  ["currency", (p) => p.currency],
  ["state", (p) => p.state],
  ["shopify_outcome", (p) => p.shopifyOutcome],
  ["gateway", (p) => p.gatewayEnv],
  ["gateway_order_id", (p) => p.gatewayOrderId],
  ["gateway_status", (p) => p.gatewayStatus],
  // A signed notification's status since the order's last read, when it is another (an AC after
  // an NR read, say): the list's "Notified since". gateway_status and state are the read's.
  ["gateway_status_notified", (p) => p.notifiedStatus],
  // Whether the coin, amounts and transactions come from a read of the gateway's own record:
  // a payment settled on a signed notification alone has none of them until the reconciler's
  // next listing reads the order (within the hour).
  ["gateway_record_read", (p) => String(p.gatewayEditedAt !== null && p.unverifiedSince === null)],
  ["coin", (p) => p.inputCurrency],
  ["crypto_amount", (p) => p.cryptoAmount],
  // What the order's on-chain transactions add up to, in the coin, confirmed or not.
  ["crypto_received", (p) => cryptoReceived(p.transactions)?.toFixed() ?? null],
  // The gateway's received_amount: the fiat value of what arrived, in the payment's currency.
  ["fiat_received", (p) => p.receivedAmount],
  ["percentage_paid", (p) => p.percentage],
  ["transactions", (p) => p.transactions.map((t) => t.txHash).join(" ") || null],
  ["attention", (p) => p.attention],
  ["attention_handled", (p) => (p.attention === null ? null : String(p.attentionResolvedAt !== null))],
];

/** A spreadsheet takes a cell starting with one of these as a formula. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One field of a CSV row (RFC 4180): quoted when it holds a quote, a comma or a line break, and
 * a semicolon or a tab too, which a spreadsheet set to split on them (Excel in Spain or
 * Germany) would otherwise cut into cells the formula check never saw; empty for null.
 */
export function csvField(value: string | null): string {
  if (value === null) return "";
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",;\t\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function csvRow(fields: readonly (string | null)[]): string {
  return `${fields.map(csvField).join(",")}\r\n`;
}

/** The file's name for a shop's export made on `now`'s UTC day: payments-<shop>-<day>.csv. */
export function exportFileName(shopDomain: string, now: Date): string {
  return `payments-${shopDomain.replace(/\.myshopify\.com$/, "")}-${now.toISOString().slice(0, 10)}.csv`;
}

/** The shop's payments the filters select, as CSV text in UTF-8, streamed batch by batch. */
export function paymentsCsv(db: Database, shopId: string, filters: PaymentFilters, batch = EXPORT_BATCH): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  // Looked up once, when the first batch is read.
  let where: Promise<Prisma.PaymentWhereInput> | null = null;
  let last: { createdAt: Date; id: string } | null = null;
  let headerSent = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!headerSent) {
        headerSent = true;
        controller.enqueue(encoder.encode(csvRow(COLUMNS.map(([header]) => header))));
        return;
      }
      const filtered = await (where ??= paymentWhere(db, shopId, filters));
      const payments = await db.payment.findMany({
        where: last ? { AND: [filtered, beyondCursor({ direction: "after", ...last })] } : filtered,
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take: batch,
        select: exportSelect,
      });
      if (payments.length > 0) {
        const notified = await notifiedStatuses(db, shopId, payments);
        const rows = payments.map((p) => ({ ...p, notifiedStatus: notified(p) }));
        controller.enqueue(encoder.encode(rows.map((p) => csvRow(COLUMNS.map(([, field]) => field(p)))).join("")));
        const end = payments[payments.length - 1]!;
        last = { createdAt: end.createdAt, id: end.id };
      }
      if (payments.length < batch) controller.close();
    },
  });
}
