// The health page: is the gateway reaching this shop (last notification, rejected ones
// by reason), is work piling up (inbox and outbox backlogs, work due that nothing takes up,
// failed Shopify calls), do payments wait for the merchant (open flags), and how much of
// today's gateway request quota is left for each connected device.
import type { CallBudget } from "~/gateway/client";
import { GATEWAY_STATUSES, isFinalGatewayStatus } from "~/gateway/statuses";
import type { GatewayEnv, ShopGatewayAccess } from "~/payments/deps";
import type { RecordedRefusal } from "~/payments/gateway-webhooks";
import { SHOPIFY_ERROR } from "~/payments/outbox-rows.server";
import type { AppServices } from "~/services.server";
import { Prisma, type Shop } from "../../generated/prisma/sqlite/client";
import { devicesUsedByAnotherShop, environmentConnection, type EnvironmentConnection } from "./connection.server";
import { formatDateTime } from "./format";
import { countNeedingAttention, HANDLED_EVENT, handledDetail } from "./payments.server";

/** The detail of a flag's handled entry written before the entries kept the flag's reason (the column's default). */
const HANDLED_BEFORE_REASONS_KEPT = "{}";

/** Every reason the door records (stored rows may hold older ones: those are shown as they are). */
const REJECTION_WORDS: Record<RecordedRefusal, string> = {
  bad_signature:
    "Signature did not match the Secret Key (a wrong Secret Key, not sent by the gateway, or a device this shop no longer uses whose notification URL is still this shop's: set that device's URL to the shop that uses it)",
  missing_nonce: "No nonce header",
  missing_signature: "No signature header",
  malformed_nonce: "Malformed nonce",
  malformed_signature: "Malformed signature",
  malformed_secret: "The stored Secret Key is not valid hex: enter it again",
  stale_nonce: "Too old (the nonce was outside the allowed time window)",
  future_nonce: "Dated in the future (check the server clock)",
  replayed: "A repeat of a notification already received",
  malformed_payload: "Not a well-formed notification body",
  no_secret_configured: "No Secret Key stored for this device: enter it on the Connection page",
  credentials_unreadable: "The stored Secret Key cannot be read with the app's encryption keys: connect the device again (the orders are read back once it can be)",
};

/** A Shopify call failed this many times in a row is listed with its reason (a blip is not). */
const RETRYING_AFTER_ATTEMPTS = 3;

/**
 * A notification or Shopify call due this long ago that no pass has taken up says the app's
 * background work has stopped or fallen far behind: a running app takes up what is due within
 * seconds, and a call waiting for its retry is not due yet.
 */
export const OVERDUE_AFTER_MS = 5 * 60_000;

export interface HealthView {
  /** When the last notification came; null when none ever did. */
  lastWebhookAt: string | null;
  lastWebhookAgo: string | null;
  rejected: { reason: string; description: string; count: number }[];
  /** Payments with a flag nobody has marked handled yet (the Needs attention page lists them). */
  needingAttention: number;
  inboxBacklog: number;
  inboxFailing: number;
  /** How long ago the oldest notification no pass has taken up fell due, when that is over OVERDUE_AFTER_MS ("12 minutes ago"); null otherwise. */
  inboxOverdueSince: string | null;
  outboxBacklog: number;
  /** The same for the updates waiting to be sent to Shopify. */
  outboxOverdueSince: string | null;
  /** The latest calls Shopify refused; `handled` once the merchant has dealt with them (REFUSAL_OPEN no longer holds). */
  outboxFailed: { id: string; kind: string; lastError: string; at: string; handled: boolean }[];
  /** Refused calls nobody has dealt with yet: the figure that stays red until someone does. */
  outboxFailedCount: number;
  /** Refused calls dealt with since: kept (never deleted), counted apart. */
  outboxFailedHandledCount: number;
  /** Calls that keep failing and are still being retried: the latest ones, with why. */
  outboxRetrying: { id: string; kind: string; lastError: string; attempts: number; nextAttemptAt: string }[];
  /** Each environment's connection, to say which stored credentials cannot be read. */
  connections: EnvironmentConnection[];
  /**
   * The connected environments whose device key the gateway refused when the page was loaded
   * (the device disabled or deleted in the gateway dashboard): no payment can start on it, and
   * the reconciler cannot read its orders.
   */
  refusedKeys: GatewayEnv[];
  /**
   * The environments whose device another installed shop uses too: its notifications reach one
   * of the shops only, which explains a quiet "last one received" (the Connection page says more).
   */
  sharedDevices: GatewayEnv[];
  quotas: { env: GatewayEnv; label: string; generalDay: number; generalMinute: number; criticalDay: number; criticalMinute: number }[];
  /**
   * Per environment with payments that finished in the last 7 days at a final gateway status:
   * how many, and how many of them no notification of the gateway reached.
   */
  unnotified: { env: GatewayEnv; finished: number; unnotified: number }[];
}

/** The Health page's check of each connected device key with the gateway: one short attempt. */
const KEY_CHECK: CallBudget = { timeoutMs: 3_000, retry: { maxAttempts: 1 }, quotaMaxWaitMs: 0 };
/**
 * A key the gateway took stands for this long without another check (the page reloaded, two
 * merchants' tabs), so the page costs the device at most one call a minute; a refused key is
 * checked at every load, so the banner goes as soon as the device is enabled again.
 */
const KEY_TAKEN_FRESH_MS = 60_000;
/** When each device's key (by its client, one per credentials) was last taken by the gateway. */
const keysTakenAt = new WeakMap<object, number>();

/** Whether the gateway refuses the device's key now (anything else, a failed check included, is not a refusal). */
async function keyRefused(client: ShopGatewayAccess["client"], now: Date): Promise<boolean> {
  const takenAt = keysTakenAt.get(client);
  if (takenAt !== undefined && now.getTime() - takenAt < KEY_TAKEN_FRESH_MS && now.getTime() >= takenAt) return false;
  const check = await client.currencies(KEY_CHECK);
  if (check.isOk()) keysTakenAt.set(client, now.getTime());
  return check.isErr() && check.error.kind === "unauthorized";
}

/** A notification sent as a payment finished may come after the app's own read settled it: so long is waited for it. */
const NOTIFICATION_GRACE_MS = 10 * 60_000;
/** The longest a gateway order stays open (CA: unpaid for more than 24 hours), with room: bounds the payments looked at by their start. */
const ORDER_LIFETIME_BOUND_MS = 2 * 86_400_000;

/**
 * The gateway notifies every change of an order's status, so a payment whose order reached a
 * final status was notified at least once. Of the shop's payments that finished since `since`
 * (and longer ago than the grace), per environment: how many reached a final status at the
 * gateway, and how many of those have no notification stored for their order. Notifications
 * are kept at least as long as the window (MIN_RETENTION_DAYS), passed-on ones in this shop's
 * own inbox. When none arrives, the device's notification URL is not this shop's (never set,
 * or set to another shop that used the device), or something in front of the app refuses the
 * gateway: the payments then settle through the app's own reads, later.
 */
async function unnotifiedPayments(services: AppServices, shop: Shop, since: Date, now: Date): Promise<HealthView["unnotified"]> {
  const finalStatuses = GATEWAY_STATUSES.filter(isFinalGatewayStatus);
  const rows = await services.sql.query<{ env: string; finished: number | bigint; unnotified: number | bigint }>(Prisma.sql`
    SELECT p."gatewayEnv" AS "env", COUNT(*) AS "finished",
      COUNT(CASE WHEN NOT EXISTS (
        SELECT 1 FROM "GatewayWebhook" w WHERE w."shopId" = p."shopId" AND w."orderId" = p."gatewayOrderId") THEN 1 END) AS "unnotified"
    FROM "Payment" p
    WHERE p."shopId" = ${shop.id} AND p."createdAt" >= ${new Date(since.getTime() - ORDER_LIFETIME_BOUND_MS)}
      AND p."finalizedAt" >= ${since} AND p."finalizedAt" < ${new Date(now.getTime() - NOTIFICATION_GRACE_MS)}
      AND p."gatewayOrderId" IS NOT NULL AND p."gatewayStatus" IN (${Prisma.join(finalStatuses)})
    GROUP BY p."gatewayEnv"`);
  return rows
    .filter((row): row is typeof row & { env: GatewayEnv } => row.env === "live" || row.env === "sandbox")
    .map((row) => ({ env: row.env, finished: Number(row.finished), unnotified: Number(row.unnotified) }))
    .sort((a, b) => a.env.localeCompare(b.env));
}

function ago(from: Date, now: Date): string {
  const seconds = Math.max(0, Math.round((now.getTime() - from.getTime()) / 1000));
  if (seconds < 90) return `${seconds} seconds ago`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `${minutes} minutes ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} hours ago`;
  return `${Math.round(hours / 24)} days ago`;
}

/**
 * Whether a refused call is still open, as SQL over a message row `m`. A payment's call is
 * dealt with once the payment has no open flag (a refusal flags the payment, or leaves an open
 * flag about the money in place, whose handling raises the refusal's own) or is gone, and once
 * a refusal's flag of the payment was marked handled after it: a flag raised later for
 * something else (crypto sent late) does not open it again. Entries of flags handled before
 * their reason was kept count as such. The shop's readiness call is dealt with once a later one
 * was delivered. Any other call (the answer to a refund or void of a payment the app does not
 * know) stays open: nothing else says it was seen. A refused call is never deleted: without
 * this, one dealt with long ago would keep the page red for good. One statement however many
 * payments are flagged.
 */
const REFUSAL_OPEN = Prisma.sql`(
  (m."paymentId" IS NOT NULL AND EXISTS (
    SELECT 1 FROM "Payment" p WHERE p."id" = m."paymentId" AND p."attention" IS NOT NULL AND p."attentionResolvedAt" IS NULL)
    AND NOT EXISTS (
      SELECT 1 FROM "PaymentEvent" e WHERE e."paymentId" = m."paymentId" AND e."type" = ${HANDLED_EVENT} AND e."at" >= m."updatedAt"
        AND e."detail" IN (${HANDLED_BEFORE_REASONS_KEPT}, ${handledDetail(SHOPIFY_ERROR)})))
  OR (m."paymentId" IS NULL AND (m."kind" <> 'app.configure' OR NOT EXISTS (
    SELECT 1 FROM "OutboxMessage" d
    WHERE d."shopDomain" = m."shopDomain" AND d."kind" = 'app.configure' AND d."status" = 'done' AND d."createdAt" > m."createdAt")))
)`;

/** How many of the shop's refused calls are open, and which of the listed ones are. */
async function openRefusals(services: AppServices, shop: Shop, listed: readonly { id: string }[]) {
  const failedOf = Prisma.sql`FROM "OutboxMessage" m WHERE m."shopDomain" = ${shop.shopDomain} AND m."status" = 'failed' AND ${REFUSAL_OPEN}`;
  const [counted, open] = await Promise.all([
    services.sql.query<{ open: number | bigint }>(Prisma.sql`SELECT COUNT(*) AS "open" ${failedOf}`),
    listed.length === 0 ? [] : services.sql.query<{ id: string }>(Prisma.sql`SELECT m."id" ${failedOf} AND m."id" IN (${Prisma.join(listed.map((m) => m.id))})`),
  ]);
  return { count: Number(counted[0]?.open ?? 0), open: new Set(open.map((m) => m.id)) };
}

export async function shopHealth(services: AppServices, shop: Shop): Promise<HealthView> {
  const { db } = services;
  const now = services.clock.now();
  const since = new Date(now.getTime() - 7 * 86_400_000);
  // Due before this and not taken up (no claim, or a claim that ran out).
  const overdue = { nextAttemptAt: { lte: new Date(now.getTime() - OVERDUE_AFTER_MS) }, OR: [{ lockedUntil: null }, { lockedUntil: { lt: now } }] };
  const oldestDue = { orderBy: { nextAttemptAt: "asc" }, select: { nextAttemptAt: true } } as const;
  const [last, rejected, inboxBacklog, inboxFailing, inboxOverdue, outboxBacklog, outboxOverdue, needingAttention, outboxFailed, outboxFailedTotal, outboxRetrying] = await Promise.all([
    db.gatewayWebhook.aggregate({ where: { shopId: shop.id }, _max: { receivedAt: true } }),
    db.rejectedWebhook.groupBy({ by: ["reason"], where: { shopId: shop.id, at: { gte: since } }, _sum: { count: true } }),
    db.gatewayWebhook.count({ where: { shopId: shop.id, processedAt: null } }),
    db.gatewayWebhook.count({ where: { shopId: shop.id, processedAt: null, attempts: { gt: 0 } } }),
    db.gatewayWebhook.findFirst({ where: { shopId: shop.id, processedAt: null, ...overdue }, ...oldestDue }),
    db.outboxMessage.count({ where: { shopDomain: shop.shopDomain, status: "pending" } }),
    db.outboxMessage.findFirst({ where: { shopDomain: shop.shopDomain, status: "pending", ...overdue }, ...oldestDue }),
    countNeedingAttention(db, shop.id),
    db.outboxMessage.findMany({ where: { shopDomain: shop.shopDomain, status: "failed" }, orderBy: { updatedAt: "desc" }, take: 10 }),
    db.outboxMessage.count({ where: { shopDomain: shop.shopDomain, status: "failed" } }),
    db.outboxMessage.findMany({
      where: { shopDomain: shop.shopDomain, status: "pending", lastError: { not: null }, attempts: { gte: RETRYING_AFTER_ATTEMPTS } },
      orderBy: { updatedAt: "desc" },
      take: 10,
    }),
  ]);
  const refusals = await openRefusals(services, shop, outboxFailed);
  const quotas: HealthView["quotas"] = [];
  const refusedKeys: GatewayEnv[] = [];
  const connections = (["live", "sandbox"] as const).map((env) => environmentConnection(shop, env, services.gateways));
  for (const connection of connections) {
    const { env } = connection;
    const access = connection.unreadable ? null : services.gateways.forShop(shop, env);
    if (!access) continue;
    // Whether the gateway still takes the device's key: one short read, never waited for long.
    if (await keyRefused(access.client, now)) refusedKeys.push(env);
    const remaining = await access.client.quotaRemaining();
    quotas.push({
      env,
      label: connection.label,
      generalDay: remaining.general.day,
      generalMinute: remaining.general.minute,
      criticalDay: remaining.critical.day,
      criticalMinute: remaining.critical.minute,
    });
  }
  const [shared, unnotified] = await Promise.all([devicesUsedByAnotherShop(db, services.gateways, shop), unnotifiedPayments(services, shop, since, now)]);
  const lastAt = last._max.receivedAt;
  return {
    lastWebhookAt: lastAt ? formatDateTime(lastAt) : null,
    lastWebhookAgo: lastAt ? ago(lastAt, now) : null,
    rejected: rejected
      .map((r) => ({ reason: r.reason, description: (REJECTION_WORDS as Record<string, string | undefined>)[r.reason] ?? r.reason.replace(/_/g, " "), count: r._sum.count ?? 0 }))
      .sort((a, b) => b.count - a.count),
    needingAttention,
    inboxBacklog,
    inboxFailing,
    inboxOverdueSince: inboxOverdue ? ago(inboxOverdue.nextAttemptAt, now) : null,
    outboxBacklog,
    outboxOverdueSince: outboxOverdue ? ago(outboxOverdue.nextAttemptAt, now) : null,
    outboxFailed: outboxFailed.map((m) => ({ id: m.id, kind: m.kind, lastError: m.lastError ?? "", at: formatDateTime(m.updatedAt), handled: !refusals.open.has(m.id) })),
    outboxFailedCount: refusals.count,
    outboxFailedHandledCount: outboxFailedTotal - refusals.count,
    outboxRetrying: outboxRetrying.map((m) => ({ id: m.id, kind: m.kind, lastError: m.lastError ?? "", attempts: m.attempts, nextAttemptAt: formatDateTime(m.nextAttemptAt) })),
    connections,
    refusedKeys,
    sharedDevices: (["live", "sandbox"] as const).filter((env) => shared[env]),
    quotas,
    unnotified,
  };
}
