// The explicit dependencies of the payments use cases. Routes and workers build them once
// (app/services.server.ts); tests pass real ones pointed at a test database, the gateway
// sandbox and the Shopify stand-in.
import type { LateWork } from "~/lib/late-work";
import type { Database } from "~/db/database.server";
import type { PlainSql } from "~/db/plain-sql.server";
import type { Logger } from "~/lib/logger.server";
import type { CallBudget, GatewayClient } from "~/gateway/client";
import type { GatewayCurrency } from "~/gateway/schemas";
import type { PaymentsAppsClient } from "~/shopify/payments-apps/client";
import type { RememberedShops } from "~/shops/shop-rows.server";
import type { Shop } from "../../generated/prisma/sqlite/client";

export type GatewayEnv = "live" | "sandbox";

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * How far apart two instances' clocks may be when one's time is compared with another's (a
 * read's against a webhook's settlement, a repeat's against an order request): instances keep
 * their clocks in step with a time service, to well within this.
 */
export const INSTANCE_CLOCK_ALLOWANCE_MS = 15_000;

export interface ShopGatewayAccess {
  env: GatewayEnv;
  client: GatewayClient;
  secretKeyHex: string;
  /**
   * The device's deviceKeyHash (app/shops/shop-credentials.server.ts): tells two shops' credentials
   * for one device from credentials for two devices, without the key.
   */
  deviceKeyHash: string;
}

/** What the gateway directory reads of a shop: its sealed credentials per environment, and those it retired. */
export type ShopCredentials = Pick<
  Shop,
  | "id"
  | "shopDomain"
  | "liveDeviceKeyEnc"
  | "liveSecretKeyEnc"
  | "sandboxDeviceKeyEnc"
  | "sandboxSecretKeyEnc"
  | "liveRetiredDeviceKeyEnc"
  | "liveRetiredSecretKeyEnc"
  | "sandboxRetiredDeviceKeyEnc"
  | "sandboxRetiredSecretKeyEnc"
>;

export interface GatewayDirectory {
  /** The gateway for one of a shop's environments; null when that environment has no credentials. */
  forShop(shop: ShopCredentials, env: GatewayEnv): ShopGatewayAccess | null;
  /**
   * The credentials the merchant removed from an environment while payments on them were in
   * progress: only to read those payments' orders and verify their notifications. Null when none.
   */
  retiredFor(shop: ShopCredentials, env: GatewayEnv): ShopGatewayAccess | null;
  /**
   * GET /currencies for that access, cached for a few minutes (it counts against the quota).
   * `budget`: the call's limits when a shopper waits on it; `askIf`: asked only when a call
   * would be made, and false keeps to the list held (even stale); `pauseAfterFailure`: within a
   * while of a failed call, the list held (or null) without asking again (a page loaded over and
   * over; a merchant's save always asks).
   */
  currencies(access: ShopGatewayAccess, budget?: CallBudget, options?: { askIf?: () => Promise<boolean>; pauseAfterFailure?: boolean }): Promise<GatewayCurrency[] | null>;
}

export interface ShopifyDirectory {
  /** The Payments Apps client with the shop's offline token; null when the shop has none. */
  forShop(shopDomain: string): Promise<PaymentsAppsClient | null>;
  /**
   * Renews the offline tokens whose refresh token runs out before `cutoff` (and not before
   * `now`: one spent already cannot be); the count renewed. A shop that makes no Shopify call
   * for months keeps a token that works. Left out by test doubles that never renew. Once
   * `stopping` says so, no further shop's is begun: a renewal spends the shop's refresh token,
   * so one begun must have the time to store the pair Shopify answers with before the process ends.
   */
  renewTokensRunningOut?(now: Date, cutoff: Date, stopping?: () => boolean): Promise<number>;
  /**
   * Waits, `withinMs` at most, for the token renewals under way (whoever began them) to store
   * the pairs Shopify answers with; how many are still running then. Stopping, the process does
   * not close the database under one: the refresh token it spent is the shop's only one.
   */
  renewalsUnderway?(withinMs: number): Promise<number>;
}

export interface ReturnLinks {
  /** Where the gateway sends the shopper back (url_ok, url_ko, url_standby). */
  returnUrl(payment: { id: string; shopId: string }, outcome: "ok" | "ko" | "standby"): string;
  /** The app's own payment page for a payment. */
  paymentPageUrl(payment: { id: string; shopId: string }): string;
  verify(payment: { id: string; shopId: string }, signature: string): boolean;
}

export interface PaymentsDeps {
  db: Database;
  /** The plain statements of the hot paths, on the same database. */
  sql: PlainSql;
  clock: Clock;
  logger: Logger;
  gateways: GatewayDirectory;
  /** The shops the hot paths read last on this instance (checked against the row on use). */
  shops: RememberedShops;
  shopify: ShopifyDirectory;
  links: ReturnLinks;
  /** Wakes the background workers after new work was stored (no-op when they poll). */
  /** Wakes the background loop that works off what was just stored or found (readiness: a shop's credentials turned out unreadable). */
  notify?: { outbox(): void; inbox(): void; readiness(): void };
  /** Work going on after its request was answered, which stopping the instance waits for. */
  lateWork?: LateWork;
}
