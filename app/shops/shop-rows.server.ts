// The shop row as the two hot paths read it (every payment session, every gateway webhook):
// one plain query instead of a compiled model query, its values checked by zod. Both
// databases return typed values (dates as Date, booleans as boolean).
import { LRUCache } from "lru-cache";
import { z } from "zod";
import { Prisma, type Shop } from "../../generated/prisma/sqlite/client";
import { quotedName, type PlainSql } from "~/db/plain-sql.server";
import type { ShopCredentials } from "~/payments/deps";

const credentialsSchema = z.object({
  id: z.string(),
  shopDomain: z.string(),
  liveDeviceKeyEnc: z.string().nullable(),
  liveSecretKeyEnc: z.string().nullable(),
  sandboxDeviceKeyEnc: z.string().nullable(),
  sandboxSecretKeyEnc: z.string().nullable(),
  liveRetiredDeviceKeyEnc: z.string().nullable(),
  liveRetiredSecretKeyEnc: z.string().nullable(),
  sandboxRetiredDeviceKeyEnc: z.string().nullable(),
  sandboxRetiredSecretKeyEnc: z.string().nullable(),
}) satisfies z.ZodType<ShopCredentials>;

/** What a payment session needs of its shop; both environments' fixed coins, as one remembered row serves test and real sessions. */
export type SessionShop = ShopCredentials & Pick<Shop, "uninstalledAt" | "testMode" | "checkoutMode" | "liveFixedCurrency" | "sandboxFixedCurrency" | "gatewayLanguage">;

const sessionShopSchema = credentialsSchema.extend({
  uninstalledAt: z.date().nullable(),
  testMode: z.boolean(),
  checkoutMode: z.string(),
  liveFixedCurrency: z.string().nullable(),
  sandboxFixedCurrency: z.string().nullable(),
  gatewayLanguage: z.string(),
}) satisfies z.ZodType<SessionShop>;

/** Column names are the schema's keys: the list in the query cannot drift from what is checked. */
function columns(schema: z.AnyZodObject): Prisma.Sql {
  return Prisma.join(Object.keys(schema.shape).map(quotedName));
}

async function readOne<S extends z.ZodRawShape>(sql: PlainSql, schema: z.ZodObject<S>, where: Prisma.Sql): Promise<z.infer<z.ZodObject<S>> | null> {
  const rows = await sql.query<unknown>(Prisma.sql`SELECT ${columns(schema)} FROM "Shop" WHERE ${where}`);
  return rows.length === 0 ? null : schema.parse(rows[0]);
}

/** The shop behind a payment session, read fresh each time (settings may change on any instance). */
export function readSessionShop(sql: PlainSql, shopDomain: string): Promise<SessionShop | null> {
  return readOne(sql, sessionShopSchema, Prisma.sql`"shopDomain" = ${shopDomain}`);
}

/**
 * A condition that holds while the shop's row still has exactly the values of `row`, a row as
 * read here (its keys are the columns read), for a write that must not go ahead on a shop
 * whose settings or credentials changed since it was read.
 */
export function shopRowUnchanged(row: SessionShop | ShopCredentials): Prisma.Sql {
  // A comparison's parameter takes the column's type on either database, dates included.
  const same = Object.entries(row).map(([name, value]: [string, unknown]) =>
    value === null ? Prisma.sql`${quotedName(name)} IS NULL` : Prisma.sql`${quotedName(name)} = ${value}`,
  );
  return Prisma.sql`EXISTS (SELECT 1 FROM "Shop" WHERE ${Prisma.join(same, " AND ")})`;
}

/**
 * Shop rows this instance read last on a hot path, so that a request can start without reading
 * its shop first: what it writes is then written only while the row is unchanged
 * (shopRowUnchanged, in the same statement), and otherwise the shop is read again. The most
 * recently used are kept.
 */
export interface ShopMemory<Row> {
  recall(key: string): Row | undefined;
  /** What a fresh read found (null: no such shop); rows the memory does not keep are forgotten. */
  remember(key: string, row: Row | null): void;
}

export function createShopMemory<Row extends object>(keeps: (row: Row) => boolean = () => true, max = 10_000): ShopMemory<Row> {
  const rows = new LRUCache<string, Row>({ max });
  return {
    recall: (key) => rows.get(key),
    remember(key, row) {
      if (row && keeps(row)) rows.set(key, row);
      else rows.delete(key);
    },
  };
}

/** The two hot paths' shops: payment sessions' by domain (installed shops only), gateway webhooks' by notification token. */
export interface RememberedShops {
  byDomain: ShopMemory<SessionShop>;
  byWebhookToken: ShopMemory<ShopCredentials>;
}

export function createRememberedShops(): RememberedShops {
  return { byDomain: createShopMemory<SessionShop>((shop) => !shop.uninstalledAt), byWebhookToken: createShopMemory<ShopCredentials>() };
}

/** The shop owning a gateway notification URL, with what verifying its signature needs. */
export function readShopByWebhookToken(sql: PlainSql, token: string): Promise<ShopCredentials | null> {
  return readOne(sql, credentialsSchema, Prisma.sql`"webhookToken" = ${token}`);
}
