// Retention: the operational rows that only serve for a while are deleted once they can
// serve no more, after RETENTION_DAYS (30 by default, never under MIN_RETENTION_DAYS).
//
// - A processed gateway webhook. Its (shop, signature) row refuses a replay of the same
//   notification, but only until its nonce is stale: the door refuses a nonce older than
//   WEBHOOK_MAX_NONCE_AGE_SECONDS (at most an hour) or more than WEBHOOK_MAX_NONCE_LEAD_SECONDS
//   ahead of the clock (5 s by default, an hour at most), so a notification received more than
//   two hours ago is refused as stale whether its row is kept or not. A webhook not processed
//   yet (waiting, or failing and retried) is never deleted, nor one processed within the
//   retention, nor a shop's newest notification (the health page's "last notification").
//   Deleting a processed webhook only means that a repeat of it the gateway sends much later,
//   with a new nonce, may be read from the gateway once instead of being dropped unread
//   (process-webhooks.ts compares a settled payment's repeats with the webhooks processed).
// - A refused webhook (RejectedWebhook): the health page counts those of the last 7 days.
// - A customers/data_request webhook taken (DataRequestDelivery): it refuses Shopify's
//   redelivery of a request already deleted, and Shopify redelivers for 48 hours at most.
// - A delivered outbox message ("done"). A dedupe key is enqueued again only while its payment
//   is open (a shopper's return asks Shopify for "pending" again under the same key); the
//   payment's final call is enqueued only when the payment becomes final, which happens once;
//   a refund, capture or void's key names its SessionRequest, which is kept; a readiness
//   call's key names the moment it was made. So a message goes only once its payment is final
//   (or gone), and a shop's newest readiness call stays (the next readiness check reads it).
//   A message Shopify refused ("failed") is never deleted: the health page counts and lists
//   every one, red until it is dealt with (its payment's flag marked handled, or a later
//   readiness call delivered; app/admin/health.server.ts), and a person must act on it.
//
// - Retired gateway credentials (removed by the merchant, or replaced by connecting another
//   device, while payments on them were still followed, app/shops/onboarding.server.ts):
//   deleted once no payment begun on them (its order requested, or with none requested yet
//   created, before they were retired: beganOnRetiredCredentials) is open, awaits the check
//   of a notification, or is a rejected one still watched for late crypto
//   (paymentsOnCredentials), whatever the retention. The payments made since, on the device
//   in use, do not keep them.
//
// Customer data, after CUSTOMER_DATA_RETENTION_DAYS (90 by default, never under
// MIN_CUSTOMER_DATA_RETENTION_DAYS), so that a shopper's personal data is not kept longer than
// the payment needs it:
// - A payment's customer fields (name, e-mail, phone, billing address) are erased once the
//   payment ended that long ago: final at the gateway and with Shopify, checked (no
//   notification awaits its read), and with no flag a person has still to handle (an
//   underpayment or late crypto may need the shopper to be reached). The timeline says when
//   and why. The gateway order, the amounts and the transactions stay: they are the
//   merchant's records. A flag handled later lets the next pass erase them.
// - A customer's data request report (CustomerDataRequest) received that long ago is deleted,
//   downloaded or not: Shopify expects the request answered within 30 days.
//
// Nothing else is deleted here: payments, their timelines and transactions are the
// merchant's records (a shop's redaction deletes them); a SessionRequest is Shopify's
// idempotency key of a refund, capture or void (a repeat must not be answered twice) and
// comes one per merchant action; the gateway quota's calls are pruned by the quota store.
//
// Rows go in batches of one short statement each, so a large backlog never holds a lock for
// long, and a pass stops after a few batches per table (the worker's loop runs the next one
// at once). Any number of instances may purge at once: each deletion is by condition (a row
// another instance deleted first is simply not counted), and on PostgreSQL a batch skips the
// rows another instance's batch holds instead of waiting for them, so two purges never wait
// on each other's rows, let alone deadlock (SQLite runs one write at a time).
import { Prisma, type Shop } from "../../generated/prisma/sqlite/client";
import { assignments, insertWhere, quotedName } from "~/db/plain-sql.server";
import { NO_RETIRED_CREDENTIALS, paymentsOnRetiredCredentials } from "~/shops/credential-columns";
import { NO_CUSTOMER_FIELDS } from "~/shops/customer-identity";
import type { GatewayEnv, PaymentsDeps } from "./deps";
import { OPEN_PAYMENT_STATES, paymentsOnCredentials } from "./payment-state";
import { newRowId } from "./session-rows.server";

const DAY_MS = 86_400_000;

/**
 * The shortest retention the app accepts: the health page's window of refused webhooks
 * (7 days), which is also far beyond the oldest nonce the door accepts (an hour at most).
 */
export const MIN_RETENTION_DAYS = 7;

export const DEFAULT_RETENTION_DAYS = 30;

/**
 * The shortest customer data retention the app accepts: a data request's report must stay for
 * the 30 days Shopify gives the merchant to answer it, which is also far beyond the week a
 * rejected payment is watched for late crypto.
 */
export const MIN_CUSTOMER_DATA_RETENTION_DAYS = 30;

export const DEFAULT_CUSTOMER_DATA_RETENTION_DAYS = 90;

/** The timeline entry of a payment whose customer fields the retention erased. */
export const CUSTOMER_DATA_ERASED = "customer_data_erased";

/** Rows one statement deletes at most. */
const BATCH_SIZE = 500;
/** Batches one pass runs per table at most; the caller runs another pass when `more` says so. */
const MAX_BATCHES = 20;

export interface PurgeOptions {
  retentionDays: number;
  customerDataDays: number;
  batchSize?: number;
  maxBatches?: number;
}

export interface PurgeResult {
  /** Environments of shops whose retired credentials were deleted. */
  retiredDevices: number;
  gatewayWebhooks: number;
  rejectedWebhooks: number;
  outboxMessages: number;
  /** Payments whose customer fields were erased. */
  customerRecords: number;
  dataRequestReports: number;
  /** Customer data request webhooks remembered against Shopify's redeliveries. */
  dataRequestDeliveries: number;
  /** Some table still had due rows when the pass stopped: run another pass. */
  more: boolean;
}

type PurgeDeps = Pick<PaymentsDeps, "db" | "sql" | "clock" | "logger">;

/** `DELETE` of up to `limit` rows of `table` (read as `alias`) that meet `condition`. */
function batchDelete(deps: PurgeDeps, table: string, alias: string, condition: Prisma.Sql, limit: number): Prisma.Sql {
  // PostgreSQL: rows another instance's batch holds are skipped, not waited for.
  const skipHeld = deps.sql.kind === "postgresql" ? Prisma.sql` FOR UPDATE SKIP LOCKED` : Prisma.empty;
  return Prisma.sql`DELETE FROM ${quotedName(table)} WHERE "id" IN (
    SELECT ${quotedName(alias)}."id" FROM ${quotedName(table)} AS ${quotedName(alias)} WHERE ${condition} LIMIT ${limit}${skipHeld})`;
}

async function deleteInBatches(deps: PurgeDeps, statement: Prisma.Sql, batchSize: number, maxBatches: number): Promise<{ deleted: number; more: boolean }> {
  let deleted = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const count = await deps.sql.execute(statement);
    deleted += count;
    if (count < batchSize) return { deleted, more: false };
  }
  return { deleted, more: true };
}

/** Processed before the cutoff, received before it too, and not the newest notification of its shop. */
function expiredWebhooks(cutoff: Date): Prisma.Sql {
  return Prisma.sql`"old"."processedAt" < ${cutoff} AND "old"."receivedAt" < ${cutoff}
    AND EXISTS (SELECT 1 FROM "GatewayWebhook" AS "newer" WHERE "newer"."shopId" = "old"."shopId" AND "newer"."receivedAt" > "old"."receivedAt")`;
}

function expiredRejections(cutoff: Date): Prisma.Sql {
  return Prisma.sql`"rejected"."at" < ${cutoff}`;
}

/** Delivered before the cutoff, its payment (if any) no longer open, and not its shop's newest readiness call. */
function expiredMessages(cutoff: Date): Prisma.Sql {
  return Prisma.sql`"message"."status" = ${"done"} AND COALESCE("message"."doneAt", "message"."updatedAt") < ${cutoff} AND "message"."createdAt" < ${cutoff}
    AND NOT EXISTS (SELECT 1 FROM "Payment" AS "payment" WHERE "payment"."id" = "message"."paymentId" AND "payment"."state" IN (${Prisma.join([...OPEN_PAYMENT_STATES])}))
    AND ("message"."kind" <> ${"app.configure"} OR EXISTS (
      SELECT 1 FROM "OutboxMessage" AS "later" WHERE "later"."shopDomain" = "message"."shopDomain" AND "later"."kind" = ${"app.configure"}
        AND ("later"."createdAt" > "message"."createdAt" OR ("later"."createdAt" = "message"."createdAt" AND "later"."id" > "message"."id"))))`;
}

/**
 * Payments whose customer fields are due for erasure (see the top of this file): ended before
 * the cutoff, checked, with no flag left to handle, and with a customer field still held.
 */
function customerDataDue(cutoff: Date): Prisma.Sql {
  const held = Prisma.join(
    Object.keys(NO_CUSTOMER_FIELDS).map((column) => Prisma.sql`"payment".${quotedName(column)} IS NOT NULL`),
    " OR ",
  );
  return Prisma.sql`"payment"."state" NOT IN (${Prisma.join([...OPEN_PAYMENT_STATES])}) AND "payment"."unverifiedSince" IS NULL
    AND "payment"."createdAt" < ${cutoff} AND ("payment"."finalizedAt" IS NULL OR "payment"."finalizedAt" < ${cutoff})
    AND ("payment"."attention" IS NULL OR "payment"."attentionResolvedAt" IS NOT NULL)
    AND (${held})`;
}

/**
 * Erases the customer fields of up to `limit` due payments, each with its timeline entry, in
 * one transaction; how many. On PostgreSQL the payments another instance's batch holds are
 * skipped, not waited for (and not erased twice: once it commits they hold no customer field).
 */
async function eraseCustomerBatch(deps: PurgeDeps, cutoff: Date, days: number, limit: number): Promise<number> {
  const skipHeld = deps.sql.kind === "postgresql" ? Prisma.sql` FOR UPDATE SKIP LOCKED` : Prisma.empty;
  return deps.sql.inTransaction(async (tx) => {
    const due = await tx.query<{ id: string }>(Prisma.sql`SELECT "payment"."id" FROM "Payment" AS "payment" WHERE ${customerDataDue(cutoff)} LIMIT ${limit}${skipHeld}`);
    if (due.length === 0) return 0;
    const at = deps.clock.now();
    const ids = Prisma.join(due.map((row) => row.id));
    await tx.execute(Prisma.sql`UPDATE "Payment" SET ${assignments({ ...NO_CUSTOMER_FIELDS, updatedAt: at })} WHERE "id" IN (${ids})`);
    const events = due.map((row) => ({ id: newRowId(), paymentId: row.id, type: CUSTOMER_DATA_ERASED, detail: JSON.stringify({ days }), at }));
    await tx.execute(insertWhere(tx.kind, "PaymentEvent", events));
    return due.length;
  });
}

async function eraseExpiredCustomerData(deps: PurgeDeps, cutoff: Date, days: number, batchSize: number, maxBatches: number): Promise<{ erased: number; more: boolean }> {
  let erased = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const count = await eraseCustomerBatch(deps, cutoff, days, batchSize);
    erased += count;
    if (count < batchSize) return { erased, more: false };
  }
  return { erased, more: true };
}

const retiredColumns = {
  id: true,
  liveRetiredDeviceKeyEnc: true,
  liveRetiredSecretKeyEnc: true,
  liveRetiredAt: true,
  sandboxRetiredDeviceKeyEnc: true,
  sandboxRetiredSecretKeyEnc: true,
  sandboxRetiredAt: true,
} as const;
type RetiredPairs = Pick<Shop, keyof typeof retiredColumns>;

/** An environment's retired pair and its time, as the row holds them: deleted only while they are unchanged. */
function heldRetired(shop: RetiredPairs, env: GatewayEnv) {
  return env === "live"
    ? { liveRetiredDeviceKeyEnc: shop.liveRetiredDeviceKeyEnc, liveRetiredSecretKeyEnc: shop.liveRetiredSecretKeyEnc, liveRetiredAt: shop.liveRetiredAt }
    : { sandboxRetiredDeviceKeyEnc: shop.sandboxRetiredDeviceKeyEnc, sandboxRetiredSecretKeyEnc: shop.sandboxRetiredSecretKeyEnc, sandboxRetiredAt: shop.sandboxRetiredAt };
}

/**
 * Deletes the retired credentials no payment begun on them needs any more (see the top of this
 * file). Which payments began on them depends on each shop's time of retirement, so each pair
 * goes by a statement of its own (only shops that hold one, which are few: a pair goes once the
 * payments begun on it are over), whose condition checks those payments and that the row still
 * holds the very pair and time read. A pair an instance of the release before retired during
 * a rolling deploy has no time: it is given the pass's time first, as the migration that added
 * the times did, so every payment made so far counts as begun on it.
 */
async function deleteUnneededRetiredCredentials(deps: PurgeDeps): Promise<number> {
  const now = deps.clock.now();
  await Promise.all([
    deps.db.shop.updateMany({ where: { liveRetiredDeviceKeyEnc: { not: null }, liveRetiredAt: null }, data: { liveRetiredAt: now } }),
    deps.db.shop.updateMany({ where: { sandboxRetiredDeviceKeyEnc: { not: null }, sandboxRetiredAt: null }, data: { sandboxRetiredAt: now } }),
  ]);
  const needing = paymentsOnCredentials(now);
  const shops = await deps.db.shop.findMany({
    where: { OR: [{ liveRetiredDeviceKeyEnc: { not: null } }, { sandboxRetiredDeviceKeyEnc: { not: null } }] },
    select: retiredColumns,
  });
  let deleted = 0;
  for (const shop of shops) {
    for (const env of ["live", "sandbox"] as const) {
      if ((env === "live" ? shop.liveRetiredDeviceKeyEnc : shop.sandboxRetiredDeviceKeyEnc) === null) continue;
      const unneeded = { payments: { none: { gatewayEnv: env, AND: [paymentsOnRetiredCredentials(shop, env), needing] } } };
      const written = await deps.db.shop.updateMany({ where: { id: shop.id, ...heldRetired(shop, env), ...unneeded }, data: NO_RETIRED_CREDENTIALS[env] });
      deleted += written.count;
    }
  }
  return deleted;
}

/**
 * Deletes the rows whose retention has run out (see the top of this file) and logs one line
 * with how many of each went.
 */
export async function purgeExpiredRows(deps: PurgeDeps, options: PurgeOptions): Promise<PurgeResult> {
  if (!Number.isInteger(options.retentionDays) || options.retentionDays < MIN_RETENTION_DAYS) {
    throw new Error(`a retention of ${options.retentionDays} days is under the minimum of ${MIN_RETENTION_DAYS}`);
  }
  if (!Number.isInteger(options.customerDataDays) || options.customerDataDays < MIN_CUSTOMER_DATA_RETENTION_DAYS) {
    throw new Error(`a customer data retention of ${options.customerDataDays} days is under the minimum of ${MIN_CUSTOMER_DATA_RETENTION_DAYS}`);
  }
  const batchSize = options.batchSize ?? BATCH_SIZE;
  const maxBatches = options.maxBatches ?? MAX_BATCHES;
  const cutoff = new Date(deps.clock.now().getTime() - options.retentionDays * DAY_MS);
  const purge = (table: string, alias: string, condition: Prisma.Sql) => deleteInBatches(deps, batchDelete(deps, table, alias, condition, batchSize), batchSize, maxBatches);

  const retiredDevices = await deleteUnneededRetiredCredentials(deps);
  const webhooks = await purge("GatewayWebhook", "old", expiredWebhooks(cutoff));
  const rejections = await purge("RejectedWebhook", "rejected", expiredRejections(cutoff));
  const messages = await purge("OutboxMessage", "message", expiredMessages(cutoff));
  const customerCutoff = new Date(deps.clock.now().getTime() - options.customerDataDays * DAY_MS);
  const customers = await eraseExpiredCustomerData(deps, customerCutoff, options.customerDataDays, batchSize, maxBatches);
  const reports = await purge("CustomerDataRequest", "report", Prisma.sql`"report"."receivedAt" < ${customerCutoff}`);
  // Shopify redelivers a webhook for 48 hours at most: after the retention, none comes again.
  const deliveries = await purge("DataRequestDelivery", "delivery", Prisma.sql`"delivery"."receivedAt" < ${cutoff}`);
  const result: PurgeResult = {
    retiredDevices,
    gatewayWebhooks: webhooks.deleted,
    rejectedWebhooks: rejections.deleted,
    outboxMessages: messages.deleted,
    customerRecords: customers.erased,
    dataRequestReports: reports.deleted,
    dataRequestDeliveries: deliveries.deleted,
    more: webhooks.more || rejections.more || messages.more || customers.more || reports.more || deliveries.more,
  };
  const { more, ...counts } = result;
  deps.logger.info("Expired rows purged", { retentionDays: options.retentionDays, customerDataDays: options.customerDataDays, ...counts, more });
  return result;
}
