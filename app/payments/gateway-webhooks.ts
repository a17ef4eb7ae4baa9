// Flow 4, at the door: a gateway notification is verified on its raw bytes with the
// shop's Secret Key (live or sandbox), refused when stale, replayed or forged, and stored
// durably before the 200. Processing happens later, from storage (process-webhooks.ts).
// The Secret Key of credentials taken out of use (removed, or replaced by another device,
// possibly because it leaked) verifies only the notifications of the payments begun on them.
import { randomUUID } from "node:crypto";
import { Prisma, type GatewayWebhook } from "../../generated/prisma/sqlite/client";
import { gatewayWebhookPayloadSchema, type GatewayWebhookPayload } from "~/gateway/schemas";
import { tryParseGatewayJson } from "~/gateway/json-numbers";
import { verifyWebhookSignature, type WebhookRejection } from "~/gateway/webhook-signature";
import { insertWhere } from "~/db/plain-sql.server";
import { jsonFlaw } from "~/lib/json-flaw";
import { beganOnRetiredCredentials } from "~/shops/credential-columns";
import { shopGateway } from "~/shops/gateway-directory.server";
import { readShopByWebhookToken, shopRowUnchanged } from "~/shops/shop-rows.server";
import type { GatewayEnv, PaymentsDeps, ShopCredentials } from "./deps";

export type WebhookIntakeResult =
  | { status: 200; webhookId: string }
  | { status: 400 | 401 | 404 | 409; reason: WebhookRejection | "unknown_endpoint" | "malformed_payload" | "replayed" | "no_secret_configured" }
  // The shop's stored Secret Key cannot be read (an encryption key dropped too early): the
  // notification cannot be told from a forgery, so it is not stored; the reconciler reads the
  // order once the credentials can be read again.
  | { status: 503; reason: "credentials_unreadable" };

export interface WebhookIntakeInput {
  token: string;
  rawBody: Uint8Array;
  nonce: string | null;
  signature: string | null;
  maxNonceAgeSeconds: number;
  /** How far ahead of the clock a nonce may be; the signature module's default when not given. */
  maxNonceLeadSeconds?: number;
}

const KEY_ORDER: readonly (readonly [GatewayEnv, "current" | "retired"])[] = [
  ["live", "current"],
  ["live", "retired"],
  ["sandbox", "current"],
  ["sandbox", "retired"],
];

export async function receiveGatewayWebhook(deps: PaymentsDeps, input: WebhookIntakeInput): Promise<WebhookIntakeResult> {
  if (!/^[A-Za-z0-9_-]{16,64}$/.test(input.token)) return { status: 404, reason: "unknown_endpoint" };
  // The shop an earlier notification read: the notification is stored only if the shop's row
  // is unchanged (in the same statement), so the shop is not read first. Anything else (a
  // refusal, a replay, changed credentials) is decided from a fresh read.
  const remembered = deps.shops.byWebhookToken.recall(input.token);
  if (remembered) {
    const stored = await verifyAndStore(deps, remembered, input, shopRowUnchanged(remembered));
    if (stored.status === 200) return stored;
  }
  const shop = await readShopByWebhookToken(deps.sql, input.token);
  deps.shops.byWebhookToken.remember(input.token, shop);
  if (!shop) return { status: 404, reason: "unknown_endpoint" };
  const result = await verifyAndStore(deps, shop, input);
  if (result.status !== 200) {
    const first = await countRefusal(deps, shop.id, result.reason);
    // Said once a minute for each reason: requests repeated at the shop's URL are counted, not logged.
    if (!first) deps.logger.debug("Gateway webhook rejected again within the minute", { shop: shop.shopDomain, reason: result.reason });
    else if (result.status === 503) deps.logger.error("Gateway webhook not verified: the shop's stored gateway credentials cannot be decrypted", { shop: shop.shopDomain });
    else deps.logger.warn("Gateway webhook rejected", { shop: shop.shopDomain, reason: result.reason });
  }
  return result;
}

/** The minutes refusals are counted in. */
const REFUSAL_MINUTE_MS = 60_000;

/**
 * Counts a refused notification of a known shop for its health page: one row per reason and
 * minute, so that anyone who knows the shop's notification URL cannot add rows (and log lines)
 * without bound. Whether it was the first of its minute. Refusals counted at once may each
 * write a row for the minute; each is counted once all the same (one row is added to, the
 * first by id), and the page adds the rows up.
 */
async function countRefusal(deps: PaymentsDeps, shopId: string, reason: string): Promise<boolean> {
  const now = deps.clock.now().getTime();
  const at = new Date(now - (now % REFUSAL_MINUTE_MS));
  const row = await deps.db.rejectedWebhook.findFirst({ where: { shopId, reason, at }, orderBy: { id: "asc" }, select: { id: true } });
  if (row) {
    // Deleted meanwhile (only rows days old are): counted in a row of its own.
    const counted = await deps.db.rejectedWebhook.updateMany({ where: { id: row.id }, data: { count: { increment: 1 } } });
    if (counted.count > 0) return false;
  }
  await deps.db.rejectedWebhook.create({ data: { shopId, reason, at } });
  return true;
}

type Refusal = Exclude<WebhookIntakeResult, { status: 200 }>;
/** Why a notification of a known shop was refused, as recorded for its health page. */
export type RecordedRefusal = Exclude<Refusal["reason"], "unknown_endpoint">;

/**
 * The notification's body as text, and its payload when it is one the app reads. The text is
 * the bytes exactly (a leading byte-order mark kept), so that it signs as the bytes did: a
 * notification passed on to another shop on the same device is verified again from it. A body
 * that is not UTF-8 is malformed (a lenient decoder would store other bytes than were signed).
 */
function readNotification(rawBody: Uint8Array): { text: string; payload: GatewayWebhookPayload | null } {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(rawBody);
  } catch {
    return { text: "", payload: null };
  }
  const json = tryParseGatewayJson(text);
  // A body with a value no text column can store (a NUL, a lone surrogate) is malformed, as a
  // body the payments API or Shopify's webhooks carry would be.
  const payload = json.ok && jsonFlaw(json.value) === null ? gatewayWebhookPayloadSchema.safeParse(json.value) : null;
  return { text, payload: payload?.success ? payload.data : null };
}

/**
 * Whether the order a notification names belongs to a payment of the environment begun on the
 * retired credentials whose Secret Key verified it (its order requested before they were
 * retired, not merely the payment created before), as the
 * shop's row holds them now. Asked only when a retired Secret Key verified a notification.
 */
async function forPaymentOnRetiredCredentials(deps: PaymentsDeps, shop: ShopCredentials, env: GatewayEnv, gatewayOrderId: string): Promise<boolean> {
  const [payment, row] = await Promise.all([
    deps.db.payment.findUnique({ where: { gatewayEnv_gatewayOrderId: { gatewayEnv: env, gatewayOrderId } }, select: { shopId: true, createdAt: true, orderRequestedAt: true } }),
    deps.db.shop.findUnique({
      where: { id: shop.id },
      select: { liveRetiredDeviceKeyEnc: true, liveRetiredSecretKeyEnc: true, liveRetiredAt: true, sandboxRetiredDeviceKeyEnc: true, sandboxRetiredSecretKeyEnc: true, sandboxRetiredAt: true },
    }),
  ]);
  if (payment === null || payment.shopId !== shop.id || row === null) return false;
  // The time read must be that of the very key that verified the notification.
  const verifiedWith = env === "live" ? shop.liveRetiredSecretKeyEnc : shop.sandboxRetiredSecretKeyEnc;
  const held = env === "live" ? row.liveRetiredSecretKeyEnc : row.sandboxRetiredSecretKeyEnc;
  return held === verifiedWith && beganOnRetiredCredentials(row, env, payment);
}

/** Verifies the notification with the shop's Secret Keys and stores it (while `onlyIf` holds, when given); a refusal is not recorded here. */
async function verifyAndStore(deps: PaymentsDeps, shop: ShopCredentials, input: WebhookIntakeInput, onlyIf?: Prisma.Sql): Promise<WebhookIntakeResult> {
  const refuse = (status: Refusal["status"], reason: Refusal["reason"]): Refusal => ({ status, reason }) as Refusal;
  let verifiedEnv: GatewayEnv | null = null;
  let verifiedSignature = "";
  let lastReason: WebhookRejection | "no_secret_configured" = "no_secret_configured";
  let unreadable = false;
  let notification: ReturnType<typeof readNotification> | undefined;
  // Each environment's Secret Key, then the one of credentials removed or replaced while
  // payments on them were followed (their notifications still settle them), each opened only
  // when the ones before did not verify the notification.
  for (const [env, slot] of KEY_ORDER) {
    const gateway = shopGateway(deps.gateways, shop, env, slot);
    if (gateway.state === "unreadable") unreadable = true;
    if (gateway.state !== "connected") continue;
    const { access } = gateway;
    const verdict = verifyWebhookSignature({
      secretHex: access.secretKeyHex,
      nonce: input.nonce ?? undefined,
      signature: input.signature ?? undefined,
      rawBody: input.rawBody,
      now: deps.clock.now(),
      maxAgeSeconds: input.maxNonceAgeSeconds,
      ...(input.maxNonceLeadSeconds === undefined ? {} : { maxFutureSkewSeconds: input.maxNonceLeadSeconds }),
    });
    // A retired Secret Key is taken only for a payment begun on its credentials: signed with it,
    // a notification of any other order (one made on the device in use, say, when the retired
    // key leaked) is as forged. Only this rare path reads the database before the insert.
    let accepted = verdict.ok;
    if (verdict.ok && slot === "retired") {
      notification ??= readNotification(input.rawBody);
      accepted = notification.payload !== null && (await forPaymentOnRetiredCredentials(deps, shop, env, notification.payload.identifier));
    }
    if (accepted && verdict.ok) {
      verifiedEnv = env;
      verifiedSignature = verdict.signature;
      break;
    }
    // Prefer the most telling reason: a header problem beats "bad signature" from the other key.
    if (lastReason === "no_secret_configured" || lastReason === "bad_signature") lastReason = verdict.ok ? "bad_signature" : verdict.reason;
  }
  // Not verified with the keys that can be read: it may be signed with the one that cannot.
  if (!verifiedEnv) return unreadable ? refuse(503, "credentials_unreadable") : refuse(401, lastReason);

  const { text, payload } = (notification ??= readNotification(input.rawBody));
  if (payload === null) return refuse(400, "malformed_payload");

  const now = deps.clock.now();
  const id = await storeInInbox(
    deps,
    {
      shopId: shop.id,
      gatewayEnv: verifiedEnv,
      nonce: input.nonce ?? "",
      signature: verifiedSignature,
      rawBody: text,
      orderId: payload.identifier,
      status: payload.status?.code ?? null,
      receivedAt: now,
    },
    now,
    onlyIf,
  );
  if (id === null) return refuse(409, "replayed");
  deps.notify?.inbox();
  return { status: 200, webhookId: id };
}

/** A verified notification as a shop's inbox keeps it. */
export type InboxNotification = Pick<GatewayWebhook, "shopId" | "gatewayEnv" | "nonce" | "signature" | "rawBody" | "orderId" | "status" | "receivedAt">;

/**
 * Stores a verified notification in its shop's inbox, due at `now`; its id, or null for a replay.
 * One plain statement (the door answers every notification with it, and the gateway waits): the
 * same signature for the shop (`signature` in its one spelling, lower-case hex: the replay
 * guard's unique key) inserts nothing instead of raising. `onlyIf`: a condition the insert
 * also needs.
 */
export async function storeInInbox(deps: PaymentsDeps, notification: InboxNotification, now: Date, onlyIf?: Prisma.Sql): Promise<string | null> {
  const id = randomUUID();
  const row = { id, ...notification, nextAttemptAt: now, attempts: 0 };
  const inserted = await deps.sql.execute(Prisma.sql`${insertWhere(deps.sql.kind, "GatewayWebhook", row, onlyIf)} ON CONFLICT ("shopId", "signature") DO NOTHING`);
  return inserted === 0 ? null : id;
}
