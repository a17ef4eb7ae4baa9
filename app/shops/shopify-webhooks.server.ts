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
 * leaves the shop's new credentials and token alone. The install time it is compared with is
 * the issue time of a session token of the admin (recordInstalledAsOf, Shopify's clock) or
 * when a new offline token was stored (recordInstall). The comparison is part of the write,
 * so a reinstall recorded while the uninstall is being handled is never undone by it.
 */
export async function handleAppUninstalled(
  deps: { db: Database; logger: Logger; clock: { now(): Date }; notify?: { readiness(): void } },
  shopDomain: string,
  triggeredAt: Date | null = null,
): Promise<void> {
  const notInstalledSince = triggeredAt ? { OR: [{ installedAt: null }, { installedAt: { lte: triggeredAt } }] } : {};
  const carriedOut = await deps.db.$transaction(async (tx) => {
    const marked = await tx.shop.updateMany({
      where: { shopDomain, ...notInstalledSince },
      data: {
        uninstalledAt: deps.clock.now(),
        paymentsAppReady: false,
        ...NO_CREDENTIALS_AT_ALL,
      },
    });
    if (marked.count === 0 && (await tx.shop.count({ where: { shopDomain } })) > 0) return false;
    // Open payments keep their records; Shopify no longer accepts calls for this shop.
    await tx.session.deleteMany({ where: { shop: shopDomain } });
    return true;
  });
  if (carriedOut) {
    deps.logger.info("App uninstalled", { shop: shopDomain });
    return;
  }
  // The merchant installed the app again after this uninstall, and Shopify starts a new install
  // not ready, whatever the row says from before: the readiness pass tells it again. The stored
  // offline token is left as it is, though it may be the earlier install's, revoked at the
  // uninstall (the library reuses a stored token that has not run out): nothing stored tells
  // when Shopify issued it, and deleting the new install's token would leave the background
  // calls without one until the merchant opens the app.
  await deps.db.shop.updateMany({ where: { shopDomain, paymentsAppReady: true }, data: { paymentsAppReady: false } });
  deps.notify?.readiness();
  deps.logger.info("An uninstall from before the app was installed again was ignored", { shop: shopDomain, triggeredAt: triggeredAt?.toISOString() ?? null });
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
/**
 * Takes the shop's row lock for the rest of the transaction: the customers/redact and the
 * customers/data_request of one shop take it first, so one never lands in the middle of the
 * other (a report stored with what a redaction erased, or two lock orders over the payments
 * that deadlock). A write that changes nothing; on SQLite the transaction holds the database.
 */
export async function lockShopForPrivacy(tx: Prisma.TransactionClient, shopId: string): Promise<void> {
  await tx.$executeRaw`UPDATE "Shop" SET "id" = "id" WHERE "id" = ${shopId}`;
}

export async function redactCustomer(deps: { db: Database; logger: Logger }, shopDomain: string, customer: CustomerIdentity): Promise<number> {
  const shop = await deps.db.shop.findUnique({ where: { shopDomain } });
  const where = shop ? customerFilter(shop.id, customer) : null;
  if (!shop || !where) return 0;
  const { payments, dataRequests, rebuilt } = await deps.db.$transaction(async (tx) => {
    await lockShopForPrivacy(tx, shop.id);
    const redacted = await tx.payment.findMany({ where, select: { shopifyPaymentId: true } });
    const result = await tx.payment.updateMany({ where, data: NO_CUSTOMER_FIELDS });
    const reports = await tx.customerDataRequest.deleteMany({ where });
    // Also the copies of the customer's payments a report took while they still held the
    // customer's fields, erased on the payment since (the retention pass): found by those fields.
    const rebuiltCount = await dropPaymentsFromReports(tx, shop.id, new Set(redacted.map((p) => p.shopifyPaymentId)), namesCustomer(customer));
    return { payments: result.count, dataRequests: reports.count, rebuilt: rebuiltCount };
  });
  deps.logger.info("Customer data redacted", { shop: shopDomain, payments, dataRequests, otherReportsRebuilt: rebuilt });
  return payments;
}

type ReportPayment = CustomerDataReport["payments"][number];

/** Whether a report's copy of a payment names the customer, by the rules of customerFilter. */
function namesCustomer(customer: CustomerIdentity): (payment: ReportPayment) => boolean {
  const email = customerEmailKey(customer.email);
  const phone = customerPhoneKey(customer.phone);
  return (payment) => {
    const paymentEmail = customerEmailKey(payment.customerEmail);
    if (email !== null && paymentEmail === email) return true;
    return phone !== null && paymentEmail === null && customerPhoneKey(payment.customerPhone) === phone;
  };
}

/**
 * Rewrites the shop's reports (a shop has few) that hold any of `shopifyPaymentIds`, or a copy
 * of a payment `named` says is the customer's, without those payments; how many were rewritten.
 */
async function dropPaymentsFromReports(
  tx: Prisma.TransactionClient,
  shopId: string,
  shopifyPaymentIds: Set<string>,
  named: (payment: ReportPayment) => boolean,
): Promise<number> {
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
    const kept = report.payments.filter((p) => !shopifyPaymentIds.has(p.shopifyPaymentId) && !named(p));
    if (kept.length === report.payments.length) continue;
    await tx.customerDataRequest.update({ where: { id: request.id }, data: { report: JSON.stringify({ ...report, payments: kept }), paymentCount: kept.length } });
    rewritten++;
  }
  return rewritten;
}

/** How long after an uninstall Shopify sends shop/redact. */
export const SHOP_REDACT_DELAY_MS = 48 * 3_600_000;

/**
 * shop/redact (48 hours after uninstall): everything the app holds for the shop is deleted.
 * `triggeredAt` (X-Shopify-Triggered-At) places the uninstall it follows 48 hours earlier.
 * Shopify retries a failed delivery for hours, and one that arrives after the merchant
 * installed the app again is about the earlier install: it is ignored (logged, and answered
 * like any other) when the shop is installed now and was known installed after that
 * uninstall, its install time later than `triggeredAt` less 48 hours. A shop whose
 * app/uninstalled was lost and that was not installed again is still deleted, since its
 * install time is older than the uninstall; so is any shop when `triggeredAt` is missing or
 * unreadable, as nothing then tells which install the redaction is about. Returns whether
 * the shop's data was deleted.
 */
export async function redactShop(deps: { db: Database; logger: Logger }, shopDomain: string, triggeredAt: Date | null = null): Promise<boolean> {
  const uninstallBefore = triggeredAt ? new Date(triggeredAt.getTime() - SHOP_REDACT_DELAY_MS) : null;
  const notInstalledSince = uninstallBefore ? { OR: [{ uninstalledAt: { not: null } }, { installedAt: null }, { installedAt: { lte: uninstallBefore } }] } : {};
  // In one transaction, so a message enqueued meanwhile (the reconciler finalising a payment)
  // cannot outlive the shop and be retried for ever without a token; the condition is part of
  // the deletion, so a reinstall recorded meanwhile is not deleted.
  const deleted = await deps.db.$transaction(async (tx) => {
    const shops = await tx.shop.deleteMany({ where: { shopDomain, ...notInstalledSince } });
    if (shops.count === 0 && uninstallBefore && (await tx.shop.count({ where: { shopDomain } })) > 0) return false;
    await tx.outboxMessage.deleteMany({ where: { shopDomain } });
    await tx.session.deleteMany({ where: { shop: shopDomain } });
    return true;
  });
  if (deleted) deps.logger.info("Shop data deleted", { shop: shopDomain });
  else deps.logger.info("A shop redaction about an install before the app was installed again was ignored", { shop: shopDomain, triggeredAt: triggeredAt!.toISOString() });
  return deleted;
}
