// The payment list's filters, read from the query string with zod: payment state,
// gateway status, a date range (UTC days, inclusive), one payment's reference to find (its
// Shopify payment id or session gid, its gateway order's identifier, or a transaction hash),
// and where the page starts (a cursor on a payment already shown). Anything malformed is
// dropped rather than failing the page, but a reference to find, which matches nothing then.
import { z } from "zod";
import { GATEWAY_STATUSES } from "~/gateway/statuses";
import { PAYMENT_STATES } from "~/payments/payment-state";
import type { Database } from "~/db/database.server";
import type { Prisma } from "../../generated/prisma/sqlite/client";

export const PAGE_SIZE = 25;

/**
 * Years 0001 to 9999: PostgreSQL has no year 0000, and JavaScript's four-digit ISO form ends
 * with 9999; a year outside them is malformed like any other.
 */
const YEAR = String.raw`(?!0000)\d{4}`;

/** A day of the calendar: Date reads 2026-02-30 as March 2, which the field never said. */
function isCalendarDay(v: string): boolean {
  const date = new Date(`${v}T00:00:00.000Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(v);
}

const day = z
  .string()
  .regex(new RegExp(String.raw`^${YEAR}-\d{2}-\d{2}$`))
  .refine(isCalendarDay, "not a date");

/**
 * A reference the list can look up: one line of printable text, long enough for a Shopify gid
 * or any chain's transaction hash.
 */
const reference = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\p{Cc}\p{Cf}\s]+$/u);

/** Whether a searched reference can be looked up; one that cannot is held by no payment. */
export function isSearchableReference(q: string): boolean {
  return reference.safeParse(q).success;
}

/**
 * A reference to find, as pasted: the spaces around it and the invisible characters a copy from
 * a web page brings along (a zero-width space) taken off. Kept whatever else it holds (cut to
 * 256 characters, longer than any reference held): one that cannot be looked up (two words, a
 * control character) matches nothing, and the list says so, rather than showing every payment
 * as if they matched, under the merchant's search.
 */
const searched = z
  .string()
  .transform((v) => v.replace(/\p{Cf}/gu, "").trim().slice(0, 256))
  .transform((v) => (v === "" ? undefined : v));

const filtersSchema = z.object({
  state: z.enum(PAYMENT_STATES).optional().catch(undefined),
  status: z.enum(GATEWAY_STATUSES).optional().catch(undefined),
  from: day.optional().catch(undefined),
  to: day.optional().catch(undefined),
  q: searched.optional().catch(undefined),
});

export type PaymentFilters = z.infer<typeof filtersSchema>;

export function parsePaymentFilters(search: URLSearchParams): PaymentFilters {
  const value = (name: string) => {
    const v = search.get(name);
    return v === null || v === "" ? undefined : v;
  };
  return filtersSchema.parse({ state: value("state"), status: value("status"), from: value("from"), to: value("to"), q: value("q") });
}

/**
 * Where a page starts in the list's order (newest first: createdAt, then id): just after a
 * payment shown (the next page) or just before one (the previous page). Anchored on a row
 * rather than counted in rows, a page neither repeats nor skips payments that arrived since.
 */
export interface PageCursor {
  direction: "after" | "before";
  createdAt: Date;
  id: string;
}

const CURSOR = new RegExp(String.raw`^(${YEAR}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)~([A-Za-z0-9_-]{1,64})$`);

/** A payment as a cursor in a link: "2026-05-01T12:00:00.000Z~<id>". */
export function cursorText(payment: { createdAt: Date; id: string }): string {
  return `${payment.createdAt.toISOString()}~${payment.id}`;
}

const cursorSchema = z
  .string()
  .max(100)
  .transform((text, ctx) => {
    const match = CURSOR.exec(text);
    const createdAt = new Date(match?.[1] ?? "");
    // The time must read back as written: Date rolls an impossible one over to another.
    if (!match || Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== match[1]) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: "not a cursor" });
      return z.NEVER;
    }
    return { createdAt, id: match[2]! };
  });

const cursorParamsSchema = z.object({ after: cursorSchema.optional().catch(undefined), before: cursorSchema.optional().catch(undefined) });

/** The page's cursor from the query string; none (the first page) when it is missing or malformed. */
export function parsePageCursor(search: URLSearchParams): PageCursor | undefined {
  const { after, before } = cursorParamsSchema.parse({ after: search.get("after") ?? undefined, before: search.get("before") ?? undefined });
  if (after) return { direction: "after", ...after };
  if (before) return { direction: "before", ...before };
  return undefined;
}

/**
 * The payments beyond the cursor in its direction: older than its payment (after) or newer
 * (before). The bound on createdAt beside the OR says the same as the OR does, for the
 * databases: it lets them start at the cursor on the (shopId, createdAt) index, where the OR
 * alone is read from the shop's newest payment on, every page (the export's batches would walk
 * past every row already sent, once a batch).
 */
export function beyondCursor(cursor: PageCursor): Prisma.PaymentWhereInput {
  const { createdAt, id } = cursor;
  return cursor.direction === "after"
    ? { createdAt: { lte: createdAt }, OR: [{ createdAt: { lt: createdAt } }, { createdAt, id: { lt: id } }] }
    : { createdAt: { gte: createdAt }, OR: [{ createdAt: { gt: createdAt } }, { createdAt, id: { gt: id } }] };
}

/**
 * The shop's payments that hold `reference` exactly: as Shopify's payment id or session gid,
 * as their gateway order's identifier, or as a transaction hash. Each is looked up on an
 * index of its own; one condition joining them with OR would be read along the shop's
 * payments instead, all of them, on both databases.
 */
export async function paymentsHolding(db: Database, shopId: string, reference: string): Promise<string[]> {
  const select = { id: true } as const;
  const [byPaymentId, byGid, byOrder, byTransaction] = await Promise.all([
    db.payment.findMany({ where: { shopId, shopifyPaymentId: reference }, select }),
    db.payment.findMany({ where: { shopId, gid: reference }, select }),
    db.payment.findMany({ where: { shopId, gatewayOrderId: reference }, select }),
    db.paymentTransaction.findMany({ where: { txHash: reference }, select: { paymentId: true, payment: { select: { shopId: true } } } }),
  ]);
  const ids = [...byPaymentId, ...byGid, ...byOrder].map((p) => p.id);
  for (const t of byTransaction) if (t.payment.shopId === shopId) ids.push(t.paymentId);
  return [...new Set(ids)];
}

/**
 * The condition selecting the shop's payments that match `filters`; `holding`, the payments
 * that hold the reference to find (paymentsHolding), when the filters name one.
 */
export function filtersWhere(shopId: string, filters: PaymentFilters, holding: readonly string[]): Prisma.PaymentWhereInput {
  const createdAt: Prisma.DateTimeFilter = {};
  if (filters.from) createdAt.gte = new Date(`${filters.from}T00:00:00.000Z`);
  // To the day's last millisecond (the stored precision), not before the next day: the day
  // after 9999-12-31 is a year no database column takes.
  if (filters.to) createdAt.lte = new Date(`${filters.to}T23:59:59.999Z`);
  return {
    shopId,
    ...(filters.state ? { state: filters.state } : {}),
    ...(filters.status ? { gatewayStatus: filters.status } : {}),
    ...(filters.from || filters.to ? { createdAt } : {}),
    // The exact reference, wherever a payment holds one: what a merchant pastes from Shopify's
    // order, the gateway's dashboard or a block explorer.
    ...(filters.q ? { id: { in: isSearchableReference(filters.q) ? [...holding] : [] } } : {}),
  };
}

/** The condition selecting the shop's payments that match `filters`, the reference to find looked up first. */
export async function paymentWhere(db: Database, shopId: string, filters: PaymentFilters): Promise<Prisma.PaymentWhereInput> {
  return filtersWhere(shopId, filters, filters.q && isSearchableReference(filters.q) ? await paymentsHolding(db, shopId, filters.q) : []);
}

/**
 * The query string of a page of the list: its filters, and where it starts, after or before a
 * payment (`cursorText`); without a start, the first page.
 */
export function filtersQuery(filters: PaymentFilters, start?: { after: string } | { before: string }): string {
  const params = new URLSearchParams();
  if (filters.state) params.set("state", filters.state);
  if (filters.status) params.set("status", filters.status);
  if (filters.from) params.set("from", filters.from);
  if (filters.to) params.set("to", filters.to);
  if (filters.q) params.set("q", filters.q);
  if (start && "after" in start) params.set("after", start.after);
  else if (start) params.set("before", start.before);
  const text = params.toString();
  return text ? `?${text}` : "";
}

/**
 * The query string of the list's page a request names (its filters and cursor), written anew
 * from their parsed values: a payment's page links back to the page of the list it was opened
 * from, and nothing else of the URL passes into that link.
 */
export function listPageQuery(search: URLSearchParams): string {
  const cursor = parsePageCursor(search);
  const start = cursor ? (cursor.direction === "after" ? { after: cursorText(cursor) } : { before: cursorText(cursor) }) : undefined;
  return filtersQuery(parsePaymentFilters(search), start);
}
