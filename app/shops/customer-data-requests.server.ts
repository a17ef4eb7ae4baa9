// Shopify's customers/data_request: a customer asked the shop for the data held about them,
// and the merchant must answer with what each app holds. The app keeps, per request, a report
// of the customer's payments as they were when the request came; the merchant downloads it
// from the admin (app/routes/app.data-requests.tsx) and passes it on. A later customers/redact
// for the same customer deletes the reports too and takes their payments out of other
// customers' reports (shopify-webhooks.server.ts), and shop/redact deletes everything.
import type { Prisma } from "../../generated/prisma/sqlite/client";
import type { Database } from "~/db/database.server";
import type { Logger } from "~/lib/logger.server";
import type { DataRequestBody } from "~/lib/shopify-webhook-bodies";
import { customerEmailKey } from "./customer-identity";
import { customerFilter, lockShopForPrivacy, type CustomerIdentity } from "./shopify-webhooks.server";

export interface CustomerDataReport {
  shopDomain: string;
  receivedAt: string;
  dataRequestId: string | null;
  customer: { shopifyCustomerId: string | null; email: string | null; phone: string | null };
  ordersRequested: string[];
  payments: {
    shopifyPaymentId: string;
    createdAt: string;
    amount: string;
    currency: string;
    state: string;
    gatewayStatus: string | null;
    customerEmail: string | null;
    customerName: string | null;
    customerPhone: string | null;
    billingAddress: unknown;
    /** The language the shopper was spoken to in (the merchantLocale column). */
    locale: string | null;
    gatewayOrderId: string | null;
    inputCurrency: string | null;
    cryptoAmount: string | null;
    receivedAmount: string | null;
    transactions: { txHash: string; currency: string; amount: string; confirmed: boolean; seenAt: string }[];
  }[];
}

const text = (value: string | number | null | undefined): string | null => (value === null || value === undefined ? null : String(value));

function parsedAddress(json: string | null): unknown {
  if (json === null) return null;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return json;
  }
}

const paymentColumns = {
  shopifyPaymentId: true,
  createdAt: true,
  amount: true,
  currency: true,
  state: true,
  gatewayStatus: true,
  customerEmail: true,
  customerName: true,
  customerPhone: true,
  billingAddress: true,
  merchantLocale: true,
  gatewayOrderId: true,
  inputCurrency: true,
  cryptoAmount: true,
  receivedAmount: true,
  transactions: { orderBy: { seenAt: "asc" }, select: { txHash: true, currency: true, amount: true, confirmed: true, seenAt: true } },
} as const satisfies Prisma.PaymentSelect;

/**
 * Stores the request with its report; a redelivery of the same webhook (same id) stores nothing
 * more, also once the request was deleted (answered by the merchant, or erased by a
 * customers/redact): the webhooks taken are kept apart from the requests (DataRequestDelivery).
 * Null when the app holds nothing for the shop, or no more of this request. The payments are
 * read and the report stored in one transaction, under the shop's lock: a customers/redact for
 * the same customer never lands between the two (lockShopForPrivacy), nor does a redelivery.
 */
export async function recordCustomerDataRequest(
  deps: { db: Database; logger: Logger; clock: { now(): Date } },
  input: { shopDomain: string; webhookId: string; payload: DataRequestBody },
): Promise<{ id: string; paymentCount: number } | null> {
  const shop = await deps.db.shop.findUnique({ where: { shopDomain: input.shopDomain }, select: { id: true } });
  if (!shop) return null;
  const { customer } = input.payload;
  const identity: CustomerIdentity = { email: customer.email, phone: customer.phone };
  const where = customerFilter(shop.id, identity);
  const stored = await deps.db.$transaction(async (tx) => {
    await lockShopForPrivacy(tx, shop.id);
    const delivery = { shopId_webhookId: { shopId: shop.id, webhookId: input.webhookId } };
    if (await tx.dataRequestDelivery.findUnique({ where: delivery, select: { webhookId: true } })) {
      return { redelivered: await tx.customerDataRequest.findUnique({ where: delivery, select: { id: true, paymentCount: true } }) };
    }
    // Taken by an instance of a release before DataRequestDelivery (during a rolling deploy),
    // which stored the request alone: it counts as taken from now on.
    const takenBefore = await tx.customerDataRequest.findUnique({ where: delivery, select: { id: true, paymentCount: true, receivedAt: true } });
    if (takenBefore) {
      await tx.dataRequestDelivery.create({ data: { shopId: shop.id, webhookId: input.webhookId, receivedAt: takenBefore.receivedAt } });
      return { redelivered: { id: takenBefore.id, paymentCount: takenBefore.paymentCount } };
    }
    const payments = where ? await tx.payment.findMany({ where, orderBy: { createdAt: "asc" }, select: paymentColumns }) : [];
    const receivedAt = deps.clock.now();
    await tx.dataRequestDelivery.create({ data: { shopId: shop.id, webhookId: input.webhookId, receivedAt } });
    const report: CustomerDataReport = {
      shopDomain: input.shopDomain,
      receivedAt: receivedAt.toISOString(),
      dataRequestId: text(input.payload.data_request?.id),
      customer: { shopifyCustomerId: text(customer.id), email: customer.email ?? null, phone: customer.phone ?? null },
      ordersRequested: (input.payload.orders_requested ?? []).map(String),
      payments: payments.map(({ merchantLocale, transactions, ...p }) => ({
        ...p,
        createdAt: p.createdAt.toISOString(),
        billingAddress: parsedAddress(p.billingAddress),
        locale: merchantLocale,
        transactions: transactions.map((t) => ({ ...t, seenAt: t.seenAt.toISOString() })),
      })),
    };
    const created = await tx.customerDataRequest.create({
      data: {
        shopId: shop.id,
        webhookId: input.webhookId,
        dataRequestId: report.dataRequestId,
        customerEmail: customerEmailKey(report.customer.email),
        customerPhone: report.customer.phone,
        report: JSON.stringify(report),
        paymentCount: payments.length,
        receivedAt,
      },
      select: { id: true, paymentCount: true },
    });
    return { created };
  });
  if ("redelivered" in stored) return stored.redelivered ?? null;
  deps.logger.info("Customer data request stored for the merchant", { shop: input.shopDomain, payments: stored.created.paymentCount });
  return stored.created;
}

/** The shop's requests, newest first, without their reports. */
export function listCustomerDataRequests(db: Database, shopId: string) {
  return db.customerDataRequest.findMany({
    where: { shopId },
    orderBy: { receivedAt: "desc" },
    select: { id: true, dataRequestId: true, customerEmail: true, customerPhone: true, paymentCount: true, receivedAt: true, downloadedAt: true },
  });
}

/** One request's report for the merchant to download, marked as downloaded; null when the shop has no such request. */
export async function takeCustomerDataReport(db: Database, shopId: string, id: string, now: Date): Promise<{ fileName: string; report: string } | null> {
  const request = await db.customerDataRequest.findFirst({ where: { id, shopId }, select: { id: true, report: true, receivedAt: true, downloadedAt: true } });
  if (!request) return null;
  if (request.downloadedAt === null) await db.customerDataRequest.updateMany({ where: { id: request.id, shopId }, data: { downloadedAt: now } });
  return { fileName: `customer-data-request-${request.receivedAt.toISOString().slice(0, 10)}-${request.id}.json`, report: request.report };
}

/** Deletes a request the merchant has answered; false when the shop has no such request. */
export async function deleteCustomerDataRequest(db: Database, shopId: string, id: string): Promise<boolean> {
  const { count } = await db.customerDataRequest.deleteMany({ where: { id, shopId } });
  return count === 1;
}
