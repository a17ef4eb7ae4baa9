// Shopify's app and privacy webhooks: uninstall (credentials deleted, open payments left
// to finish), and the mandatory customer and shop data requests.
import type { Database } from "~/db/database.server";
import type { Logger } from "~/lib/logger.server";
import type { Prisma } from "../../generated/prisma/sqlite/client";
import type { CustomerDataReport } from "./customer-data-requests.server";
import { customerEmailKey, customerPhoneKey, NO_CUSTOMER_FIELDS } from "./customer-identity";
import { NO_CREDENTIALS_AT_ALL } from "./credential-columns";

/**
 * app/uninstalled. `triggeredAt` (Shopify's X-Shopify-Triggered-At): an uninstall Shopify
 * retries after the merchant installed the app again is about the earlier install, and
 * leaves the shop's new credentials and token alone.
 */
export async function handleAppUninstalled(deps: { db: Database; logger: Logger; clock: { now(): Date } }, shopDomain: string, triggeredAt: Date | null = null): Promise<void> {
  const shop = await deps.db.shop.findUnique({ where: { shopDomain } });
  if (shop?.installedAt && triggeredAt && triggeredAt.getTime() < shop.installedAt.getTime()) {
    deps.logger.info("An uninstall from before the app was installed again was ignored", { shop: shopDomain, triggeredAt: triggeredAt.toISOString() });
    return;
  }
  if (shop) {
    await deps.db.shop.update({
      where: { id: shop.id },
      data: {
        uninstalledAt: deps.clock.now(),
        paymentsAppReady: false,
        ...NO_CREDENTIALS_AT_ALL,
      },
    });
  }
  // Open payments keep their records; Shopify no longer accepts calls for this shop.
  await deps.db.session.deleteMany({ where: { shop: shopDomain } });
  deps.logger.info("App uninstalled", { shop: shopDomain });
}

export interface CustomerIdentity {
  email?: string | null | undefined;
  phone?: string | null | undefined;
}

/** The forms a customer's e-mail or phone may be stored in: its key, and as Shopify sent it. */
function storedForms(key: string | null, sent: string | null | undefined): string[] {
  return [...new Set([key, sent?.trim()].filter((form): form is string => Boolean(form)))];
}

/**
 * The shop's rows about this customer (payments and data requests name them alike): those with
 * the customer's e-mail (in any case, see customerEmailKey), and those with no e-mail at all
 * and the customer's phone. A phone alone does not name one person when an e-mail says otherwise: a payment's phone may be its
 * billing address's, a household's or a company's, shared by customers with other e-mails.
 */
export function customerFilter(shopId: string, customer: CustomerIdentity) {
  // Stored by its key since e-mails are kept in lower case; as typed before (a form the
  // migration could not lower, see customerEmailKey), found when Shopify sends that same form.
  const emails = storedForms(customerEmailKey(customer.email), customer.email);
  // Phones likewise: payments keep the phone's key (customerPhoneKey), and a migration reduced
  // the ones stored before to it (a lookup by both forms alone would miss "+34 611 222 333"
  // stored and "+34611222333" sent); the exact form finds data requests, kept as Shopify sent
  // them, and a stored phone the migration left as typed.
  const phones = storedForms(customerPhoneKey(customer.phone), customer.phone);
  const or = [
    ...emails.map((email) => ({ customerEmail: email })),
    ...(phones.length ? [{ customerEmail: null, customerPhone: { in: phones } }] : []),
  ];
  return or.length ? { shopId, OR: or } : null;
}

/**
 * customers/redact: the customer's personal fields are erased from every payment record, and
 * the reports kept for their data requests are deleted. A report kept for another customer's
 * request that copied in one of these payments (a shared phone) is rebuilt without it rather
 * than deleted: that request stays answerable, with what the app still holds about its customer.
 */
export async function redactCustomer(deps: { db: Database; logger: Logger }, shopDomain: string, customer: CustomerIdentity): Promise<number> {
  const shop = await deps.db.shop.findUnique({ where: { shopDomain } });
  const where = shop ? customerFilter(shop.id, customer) : null;
  if (!shop || !where) return 0;
  const { payments, dataRequests, rebuilt } = await deps.db.$transaction(async (tx) => {
    const redacted = await tx.payment.findMany({ where, select: { shopifyPaymentId: true } });
    const result = await tx.payment.updateMany({ where, data: NO_CUSTOMER_FIELDS });
    const reports = await tx.customerDataRequest.deleteMany({ where });
    const rebuiltCount = await dropPaymentsFromReports(tx, shop.id, new Set(redacted.map((p) => p.shopifyPaymentId)));
    return { payments: result.count, dataRequests: reports.count, rebuilt: rebuiltCount };
  });
  deps.logger.info("Customer data redacted", { shop: shopDomain, payments, dataRequests, otherReportsRebuilt: rebuilt });
  return payments;
}

/** Rewrites the shop's reports (a shop has few) that hold any of `shopifyPaymentIds` without those payments; how many were rewritten. */
async function dropPaymentsFromReports(tx: Prisma.TransactionClient, shopId: string, shopifyPaymentIds: Set<string>): Promise<number> {
  if (shopifyPaymentIds.size === 0) return 0;
  let rewritten = 0;
  for (const request of await tx.customerDataRequest.findMany({ where: { shopId }, select: { id: true, report: true } })) {
    let report: CustomerDataReport;
    try {
      report = JSON.parse(request.report) as CustomerDataReport;
    } catch {
      // Not a report the app wrote: it cannot be shown not to hold the payments.
      await tx.customerDataRequest.delete({ where: { id: request.id } });
      rewritten++;
      continue;
    }
    const kept = report.payments.filter((p) => !shopifyPaymentIds.has(p.shopifyPaymentId));
    if (kept.length === report.payments.length) continue;
    await tx.customerDataRequest.update({ where: { id: request.id }, data: { report: JSON.stringify({ ...report, payments: kept }), paymentCount: kept.length } });
    rewritten++;
  }
  return rewritten;
}

/** shop/redact (48 hours after uninstall): everything the app holds for the shop is deleted. */
export async function redactShop(deps: { db: Database; logger: Logger }, shopDomain: string): Promise<void> {
  // In one transaction, so a message enqueued meanwhile (the reconciler finalising a payment)
  // cannot outlive the shop and be retried for ever without a token.
  await deps.db.$transaction([
    deps.db.shop.deleteMany({ where: { shopDomain } }),
    deps.db.outboxMessage.deleteMany({ where: { shopDomain } }),
    deps.db.session.deleteMany({ where: { shop: shopDomain } }),
  ]);
  deps.logger.info("Shop data deleted", { shop: shopDomain });
}
