// Shopify's app and privacy webhooks: uninstall (credentials deleted, open payments left
// to finish), and the mandatory customer and shop data requests.
import type { Database } from "~/db/database.server";
import { valueWithin } from "~/lib/deadline";
import type { Logger } from "~/lib/logger.server";
import type { ShopifyDirectory } from "~/payments/deps";
import { describePaymentsAppsError } from "~/shopify/payments-apps/errors";
import { Prisma } from "../../generated/prisma/sqlite/client";
import type { CustomerDataReport } from "./customer-data-requests.server";
import { customerEmailKey, customerPhoneKey, earlierPhoneKeys, NO_CUSTOMER_FIELDS } from "./customer-identity";
import { NO_CREDENTIALS_AT_ALL } from "./credential-columns";

/**
 * What became of an app/uninstalled or a shop/redact: carried out; ignored, as about an earlier
 * install (or a replay); or held (an UnconfirmedUninstall row), because Shopify could not say
 * whether the app is still installed: recheckUnconfirmedUninstalls asks again until it can.
 */
export type UninstallOutcome = "carried_out" | "ignored" | "unconfirmed";

export type UninstallTopic = "app/uninstalled" | "shop/redact";

/**
 * How long after a check an unconfirmed uninstall or redaction is asked about again. A frozen
 * (402) or locked (423) shop may stay so for weeks, and is then asked about 24 times a day; a
 * Shopify outage is over within the hour after it ends.
 */
export const UNCONFIRMED_UNINSTALL_RECHECK_MS = 3_600_000;

export interface UninstallDeps {
  db: Database;
  logger: Logger;
  /** Asked whether the shop's token still works before an installed shop is uninstalled or deleted. */
  shopify: ShopifyDirectory;
}

/**
 * Whether an app/uninstalled or shop/redact may be carried out for the shop. Shopify's HMAC
 * signs a webhook's body only: X-Shopify-Triggered-At is not signed, so a body Shopify once
 * delivered for the shop (a log, a proxy) can be posted again with a fresh time, and the
 * comparisons with the install time alone would take it for an uninstall of the current
 * install. So before acting on a shop whose row says it is installed and that has an offline
 * token, Shopify is asked whether it still takes that token (the PublicApiVersions query, after
 * the directory's renewal with the refresh token when refused): Shopify revokes an app's
 * tokens when the merchant uninstalls it. Refused (401), or no such shop at Shopify any more
 * (404, a closed shop): the uninstall is real ("go_on").
 * Taken (or forbidden, 403, which Shopify answers only to a token it knows): the app is
 * installed, and the webhook is about an earlier install or replayed ("installed"). Any other
 * answer, or none (network, timeout, 5xx, 429, a frozen shop's 402, a locked shop's 423):
 * "unconfirmed", nothing is changed yet, and the webhook is held to be asked about again
 * (holdUnconfirmed); so is a stored token that cannot be opened. A shop with no row, no stored
 * token, or whose row records the uninstall already is not asked about ("go_on").
 */
async function confirmUninstall(deps: UninstallDeps, shopDomain: string): Promise<UninstallVerdict> {
  const shop = await deps.db.shop.findUnique({ where: { shopDomain }, select: { id: true, uninstalledAt: true } });
  if (!shop || shop.uninstalledAt !== null) return { verdict: "go_on" };
  const late: UninstallVerdict = { verdict: "unconfirmed", shopId: shop.id, detail: `Shopify did not answer within ${CONFIRM_UNINSTALL_WAIT_MS} ms` };
  return valueWithin(askAboutToken(deps, shopDomain, shop.id), CONFIRM_UNINSTALL_WAIT_MS, late);
}

type UninstallVerdict = { verdict: "go_on" | "installed" } | { verdict: "unconfirmed"; shopId: string; detail: string };

/**
 * How long an app/uninstalled or shop/redact waits for Shopify to say whether it still takes
 * the shop's token (with a renewal of the token first, when due) before the webhook is held
 * (answered, and asked about again in an hour): Shopify counts a webhook not answered within
 * 5 s as failed, and a call of the app's to Shopify may take up to 15 s.
 */
export const CONFIRM_UNINSTALL_WAIT_MS = 3_000;

/** confirmUninstall's question to Shopify, for an installed shop's row. */
async function askAboutToken(deps: UninstallDeps, shopDomain: string, shopId: string): Promise<UninstallVerdict> {
  const client = await deps.shopify.forShop(shopDomain);
  if (!client) {
    // An offline token is stored but cannot be opened (a key dropped too early): it cannot be
    // asked about, which is not the same as there being none.
    const stored = await deps.db.session.count({ where: { shop: shopDomain, isOnline: false } });
    return stored > 0 ? { verdict: "unconfirmed", shopId, detail: "the shop's stored offline token cannot be opened with the configured keys" } : { verdict: "go_on" };
  }
  const answer = await client.publicApiVersions();
  if (answer.isOk() || (answer.error.kind === "unauthorized" && answer.error.status === 403)) return { verdict: "installed" };
  // 401: the token is revoked. 404: Shopify knows no such shop any more (closed), where nothing is installed.
  if ((answer.error.kind === "unauthorized" && answer.error.status === 401) || (answer.error.kind === "http_error" && answer.error.status === 404)) return { verdict: "go_on" };
  return { verdict: "unconfirmed", shopId, detail: describePaymentsAppsError(answer.error) };
}

/**
 * How long an app/uninstalled or shop/redact is held while Shopify cannot say whether the app is
 * installed. Past it, the webhook is carried out on its own word: a shop/redact is to be carried
 * out within 30 days, and a shop Shopify has not served for that long (frozen, locked) takes no
 * payments. A body replayed to exploit it would need Shopify silent about the shop all that time.
 */
export const UNCONFIRMED_UNINSTALL_LIMIT_MS = 30 * 24 * 3_600_000;

/**
 * The same for a shop/redact, a day shorter: Shopify wants a redaction carried out within 30
 * days of its request, and the held webhooks are asked about an hour apart, so one held for the
 * full 30 days was carried out up to an hour past them.
 */
export const UNCONFIRMED_REDACT_LIMIT_MS = UNCONFIRMED_UNINSTALL_LIMIT_MS - 24 * 3_600_000;

/**
 * Keeps an app/uninstalled or shop/redact Shopify could not confirm, to be asked about again
 * (recheckUnconfirmedUninstalls): Shopify stops delivering a webhook after a few hours of
 * failed attempts, and a frozen or locked shop can stay so far longer, so answering it with an
 * error would lose the uninstall (the shop's gateway credentials kept) or the redaction. A later
 * delivery, or a check, counts as one more check; the latest Triggered-At is kept (a genuine
 * uninstall of a reinstall must not be judged by the earlier install's retried one). "overdue":
 * held for UNCONFIRMED_UNINSTALL_LIMIT_MS (a redaction UNCONFIRMED_REDACT_LIMIT_MS), and to be
 * carried out now.
 */
async function holdUnconfirmed(
  deps: UninstallDeps & { clock: { now(): Date } },
  held: { shopId: string; detail: string },
  shopDomain: string,
  topic: UninstallTopic,
  triggeredAt: Date | null,
): Promise<"held" | "overdue"> {
  const now = deps.clock.now();
  const key = { shopId: held.shopId, topic };
  const row = await deps.db.unconfirmedUninstall.upsert({
    where: { shopId_topic: key },
    create: { ...key, triggeredAt, receivedAt: now, checkedAt: now },
    update: { checkedAt: now, checks: { increment: 1 } },
    select: { checks: true, receivedAt: true },
  });
  if (triggeredAt) {
    await deps.db.unconfirmedUninstall.updateMany({ where: { ...key, OR: [{ triggeredAt: null }, { triggeredAt: { lt: triggeredAt } }] }, data: { triggeredAt } });
  }
  const context = { shop: shopDomain, topic, checks: row.checks, heldSince: row.receivedAt.toISOString(), detail: held.detail };
  const limitMs = topic === "shop/redact" ? UNCONFIRMED_REDACT_LIMIT_MS : UNCONFIRMED_UNINSTALL_LIMIT_MS;
  if (now.getTime() - row.receivedAt.getTime() >= limitMs) {
    deps.logger.warn(`Shopify has not said for ${limitMs / 86_400_000} days whether the app is still installed; the webhook is carried out on its own word`, context);
    return "overdue";
  }
  deps.logger.warn("Shopify could not say whether the app is still installed; the webhook is kept and Shopify is asked again in an hour", context);
  return "held";
}

/** The held webhook of this topic is settled (carried out or ignored): it is not asked about again. */
async function releaseHeld(db: Prisma.TransactionClient, shopDomain: string, topic: UninstallTopic): Promise<void> {
  await db.unconfirmedUninstall.deleteMany({ where: { topic, shop: { shopDomain } } });
}

/**
 * Asks Shopify again about the held app/uninstalled and shop/redact webhooks last asked about
 * an hour ago or more (UNCONFIRMED_UNINSTALL_RECHECK_MS), oldest check first, and carries out
 * each whose shop's token Shopify now refuses; an uninstall before a redaction of the same shop.
 * How many were settled (carried out or ignored), and how many are still unconfirmed.
 */
export async function recheckUnconfirmedUninstalls(
  deps: UninstallDeps & { clock: { now(): Date }; notify?: { readiness(): void } },
  options: { limit?: number; stopping?: () => boolean } = {},
): Promise<{ settled: number; unconfirmed: number; failed: number }> {
  const due = await deps.db.unconfirmedUninstall.findMany({
    where: { checkedAt: { lte: new Date(deps.clock.now().getTime() - UNCONFIRMED_UNINSTALL_RECHECK_MS) } },
    orderBy: { checkedAt: "asc" },
    take: options.limit ?? 20,
    select: { id: true, topic: true, triggeredAt: true, shop: { select: { shopDomain: true } } },
  });
  due.sort((a, b) => Number(a.topic === "shop/redact") - Number(b.topic === "shop/redact"));
  const counts = { settled: 0, unconfirmed: 0, failed: 0 };
  for (const held of due) {
    if (options.stopping?.()) break;
    try {
      const outcome =
        held.topic === "shop/redact"
          ? await redactShop(deps, held.shop.shopDomain, held.triggeredAt)
          : await handleAppUninstalled(deps, held.shop.shopDomain, held.triggeredAt);
      if (outcome === "unconfirmed") counts.unconfirmed++;
      else counts.settled++;
    } catch (error) {
      // Counted as a check, so that it does not come first again and hold up the others.
      counts.failed++;
      deps.logger.error("A held uninstall could not be checked again; it is tried again in an hour", { shop: held.shop.shopDomain, topic: held.topic, error });
      await deps.db.unconfirmedUninstall.updateMany({ where: { id: held.id }, data: { checkedAt: deps.clock.now(), checks: { increment: 1 } } });
    }
  }
  return counts;
}

/**
 * app/uninstalled. Carried out only once Shopify refuses the shop's token (confirmUninstall):
 * X-Shopify-Triggered-At is not signed, and cannot tell a replay from Shopify's delivery.
 * `triggeredAt` (that header) still places a genuine delivery: an uninstall Shopify retries
 * after the merchant installed the app again is about the earlier install, and leaves the
 * shop's new credentials and token alone. The install time it is compared with is the issue
 * time of a session token of the admin (recordInstalledAsOf, Shopify's clock) or when a new
 * offline token was stored (recordInstall). The comparison is part of the write, so a
 * reinstall recorded while the uninstall is being handled is never undone by it.
 */
export async function handleAppUninstalled(
  deps: UninstallDeps & { clock: { now(): Date }; notify?: { readiness(): void } },
  shopDomain: string,
  triggeredAt: Date | null = null,
): Promise<UninstallOutcome> {
  const confirmed = await confirmUninstall(deps, shopDomain);
  if (confirmed.verdict === "unconfirmed" && (await holdUnconfirmed(deps, confirmed, shopDomain, "app/uninstalled", triggeredAt)) === "held") return "unconfirmed";
  if (confirmed.verdict === "installed") {
    // Nothing is uninstalled. One triggered before the recorded install is Shopify's late
    // delivery about an earlier install, and tells of a new install (below); any other (a
    // fresh time, or none) is a body posted again, and changes nothing.
    if (triggeredAt && (await deps.db.shop.count({ where: { shopDomain, installedAt: { gt: triggeredAt } } })) > 0) {
      return ignoredAsEarlierInstall(deps, shopDomain, triggeredAt);
    }
    await releaseHeld(deps.db, shopDomain, "app/uninstalled");
    deps.logger.info("An app/uninstalled for a shop whose token Shopify still takes was ignored (about an earlier install, or replayed)", {
      shop: shopDomain,
      triggeredAt: triggeredAt?.toISOString() ?? null,
    });
    return "ignored";
  }
  const notInstalledSince = triggeredAt ? { OR: [{ installedAt: null }, { installedAt: { lte: triggeredAt } }] } : {};
  const carriedOut = await deps.db.$transaction(async (tx) => {
    const marked = await tx.shop.updateMany({
      where: { shopDomain, ...notInstalledSince },
      data: {
        uninstalledAt: deps.clock.now(),
        paymentsAppReady: false,
        readinessUnconfirmed: false,
        ...NO_CREDENTIALS_AT_ALL,
      },
    });
    if (marked.count === 0 && (await tx.shop.count({ where: { shopDomain } })) > 0) return false;
    // Open payments keep their records; Shopify no longer accepts calls for this shop.
    await tx.session.deleteMany({ where: { shop: shopDomain } });
    await releaseHeld(tx, shopDomain, "app/uninstalled");
    return true;
  });
  if (carriedOut) {
    deps.logger.info("App uninstalled", { shop: shopDomain });
    return "carried_out";
  }
  return ignoredAsEarlierInstall(deps, shopDomain, triggeredAt);
}

async function ignoredAsEarlierInstall(
  deps: { db: Database; logger: Logger; notify?: { readiness(): void } },
  shopDomain: string,
  triggeredAt: Date | null,
): Promise<UninstallOutcome> {
  // The merchant installed the app again after this uninstall. Shopify started the new install
  // not ready and may have been told its readiness since: the row cannot vouch for either, so
  // the readiness pass sends it again. The stored offline token is left as it is, though it may
  // be the earlier install's, revoked at the uninstall (the library reuses a stored token that
  // has not run out): nothing stored tells when Shopify issued it, and deleting the new
  // install's token would leave the background calls without one until the merchant opens the app.
  await releaseHeld(deps.db, shopDomain, "app/uninstalled");
  await deps.db.shop.updateMany({ where: { shopDomain, uninstalledAt: null }, data: { readinessUnconfirmed: true } });
  deps.notify?.readiness();
  deps.logger.info("An uninstall from before the app was installed again was ignored", { shop: shopDomain, triggeredAt: triggeredAt?.toISOString() ?? null });
  return "ignored";
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
  // them, and a stored phone the migration left as typed; the earlier key of the same phone
  // ("0034611222333") finds one stored before "00" was read as "+".
  const phoneKey = customerPhoneKey(customer.phone);
  const phones = [...new Set([...storedForms(phoneKey, customer.phone), ...earlierPhoneKeys(phoneKey)])];
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

/** How many of a shop's records of one kind a redaction deletes at a time, before the shop's own row. */
export const SHOP_REDACT_BATCH = 500;

/**
 * Deletes the shop's bulk, a batch at a time, each batch in a short transaction of its own that
 * first finds the shop still to be deleted (`shop`): its payments (with their events and
 * transactions, by cascade), session requests, gateway notifications, refused notifications and
 * Shopify calls, recorded up to `before` (a reinstall recorded meanwhile keeps what it records).
 * The shop's row and whatever is left then go in one transaction. All of a large shop in that
 * one (years of payments: hundreds of thousands of rows) outlasted the transaction's time limit,
 * on every retry of Shopify's alike, so the shop was never deleted; and on SQLite it held every
 * other shop's writes for as long.
 */
export async function deleteShopRecordsInBatches(db: Database, shop: Prisma.ShopWhereInput, before: Date, batch = SHOP_REDACT_BATCH): Promise<void> {
  for (const { table, owner, time } of SHOP_RECORDS) {
    const [name, ownerColumn, timeColumn] = [table, owner, time].map((identifier) => Prisma.raw(`"${identifier}"`));
    for (;;) {
      const deleted = await db.$transaction(async (tx) => {
        const found = await tx.shop.findFirst({ where: shop, select: { id: true, shopDomain: true } });
        if (!found) return null;
        return tx.$executeRaw(Prisma.sql`
          DELETE FROM ${name} WHERE "id" IN (
            SELECT "id" FROM ${name} WHERE ${ownerColumn} = ${owner === "shopId" ? found.id : found.shopDomain} AND ${timeColumn} <= ${before} LIMIT ${batch})`);
      });
      if (deleted === null) return;
      if (deleted < batch) break;
    }
  }
}

/** What a redaction deletes in batches: each table, the column naming the shop (its id or domain), and the time the record was made. */
const SHOP_RECORDS = [
  { table: "Payment", owner: "shopId", time: "createdAt" },
  { table: "SessionRequest", owner: "shopId", time: "createdAt" },
  { table: "GatewayWebhook", owner: "shopId", time: "receivedAt" },
  { table: "RejectedWebhook", owner: "shopId", time: "at" },
  { table: "OutboxMessage", owner: "shopDomain", time: "createdAt" },
] as const;

/** How long after an uninstall Shopify sends shop/redact. */
export const SHOP_REDACT_DELAY_MS = 48 * 3_600_000;

/**
 * shop/redact (48 hours after uninstall): everything the app holds for the shop is deleted.
 * A shop whose row says it is installed is deleted only once Shopify refuses its token
 * (confirmUninstall): X-Shopify-Triggered-At is not signed, so a replayed body with a fresh
 * time would otherwise delete an installed shop with all its payment records.
 * `triggeredAt` (that header) places the uninstall it follows 48 hours earlier.
 * Shopify retries a failed delivery for hours, and one that arrives after the merchant
 * installed the app again is about the earlier install: it is ignored (logged, and answered
 * like any other) when the shop is installed now and was known installed after that
 * uninstall, its install time later than `triggeredAt` less 48 hours. A shop whose
 * app/uninstalled was lost and that was not installed again is still deleted, since its
 * install time is older than the uninstall; so is any shop when `triggeredAt` is missing or
 * unreadable, as nothing then tells which install the redaction is about (a shop whose
 * token Shopify refuses, or that has none).
 */
export async function redactShop(deps: UninstallDeps & { clock: { now(): Date } }, shopDomain: string, triggeredAt: Date | null = null): Promise<UninstallOutcome> {
  const confirmed = await confirmUninstall(deps, shopDomain);
  if (confirmed.verdict === "unconfirmed" && (await holdUnconfirmed(deps, confirmed, shopDomain, "shop/redact", triggeredAt)) === "held") return "unconfirmed";
  if (confirmed.verdict === "installed") {
    await releaseHeld(deps.db, shopDomain, "shop/redact");
    deps.logger.info("A shop/redact for a shop whose token Shopify still takes was ignored (about an earlier install, or replayed)", {
      shop: shopDomain,
      triggeredAt: triggeredAt?.toISOString() ?? null,
    });
    return "ignored";
  }
  const uninstallBefore = triggeredAt ? new Date(triggeredAt.getTime() - SHOP_REDACT_DELAY_MS) : null;
  const notInstalledSince: Prisma.ShopWhereInput = uninstallBefore ? { OR: [{ uninstalledAt: { not: null } }, { installedAt: null }, { installedAt: { lte: uninstallBefore } }] } : {};
  await deleteShopRecordsInBatches(deps.db, { shopDomain, ...notInstalledSince }, deps.clock.now());
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
  // Deleting the shop deleted what was held for it.
  if (deleted) {
    deps.logger.info("Shop data deleted", { shop: shopDomain });
    return "carried_out";
  }
  await releaseHeld(deps.db, shopDomain, "shop/redact");
  deps.logger.info("A shop redaction about an install before the app was installed again was ignored", { shop: shopDomain, triggeredAt: triggeredAt!.toISOString() });
  return "ignored";
}
