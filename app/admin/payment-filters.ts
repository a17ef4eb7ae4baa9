// The payment list's filters, read from the query string with zod: payment state,
// gateway status, a date range (UTC days, inclusive) and the page number. Anything
// malformed is dropped rather than failing the page.
import { z } from "zod";
import { GATEWAY_STATUSES } from "~/gateway/statuses";
import { PAYMENT_STATES } from "~/payments/payment-state";
import type { Prisma } from "../../generated/prisma/sqlite/client";

export const PAGE_SIZE = 25;

const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .refine((v) => !Number.isNaN(Date.parse(`${v}T00:00:00Z`)), "not a date");

const filtersSchema = z.object({
  state: z.enum(PAYMENT_STATES).optional().catch(undefined),
  status: z.enum(GATEWAY_STATUSES).optional().catch(undefined),
  from: day.optional().catch(undefined),
  to: day.optional().catch(undefined),
  page: z.coerce.number().int().min(1).max(100_000).catch(1),
});

export type PaymentFilters = z.infer<typeof filtersSchema>;

export function parsePaymentFilters(search: URLSearchParams): PaymentFilters {
  const value = (name: string) => {
    const v = search.get(name);
    return v === null || v === "" ? undefined : v;
  };
  return filtersSchema.parse({ state: value("state"), status: value("status"), from: value("from"), to: value("to"), page: value("page") ?? 1 });
}

export function paymentWhere(shopId: string, filters: PaymentFilters): Prisma.PaymentWhereInput {
  const createdAt: Prisma.DateTimeFilter = {};
  if (filters.from) createdAt.gte = new Date(`${filters.from}T00:00:00.000Z`);
  if (filters.to) createdAt.lt = new Date(new Date(`${filters.to}T00:00:00.000Z`).getTime() + 86_400_000);
  return {
    shopId,
    ...(filters.state ? { state: filters.state } : {}),
    ...(filters.status ? { gatewayStatus: filters.status } : {}),
    ...(filters.from || filters.to ? { createdAt } : {}),
  };
}

/** The query string for another page of the same filters. */
export function filtersQuery(filters: PaymentFilters, page: number): string {
  const params = new URLSearchParams();
  if (filters.state) params.set("state", filters.state);
  if (filters.status) params.set("status", filters.status);
  if (filters.from) params.set("from", filters.from);
  if (filters.to) params.set("to", filters.to);
  if (page > 1) params.set("page", String(page));
  const text = params.toString();
  return text ? `?${text}` : "";
}
