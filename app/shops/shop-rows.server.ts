// The shop row as the two hot paths read it (every payment session, every gateway webhook):
// one plain query instead of a compiled model query, its values checked by zod. Both
// databases return typed values (dates as Date, booleans as boolean).
import { LRUCache } from "lru-cache";
import { z } from "zod";
import { Prisma, type Shop } from "../../generated/prisma/sqlite/client";
import type { DatabaseKind } from "~/db/database-url";
import { timeValue, type PlainSql } from "~/db/plain-sql.server";
import type { ShopCredentials } from "~/payments/deps";

const credentialsSchema = z.object({
  id: z.string(),
  shopDomain: z.string(),
  liveDeviceKeyEnc: z.string().nullable(),
  liveSecretKeyEnc: z.string().nullable(),
  sandboxDeviceKeyEnc: z.string().nullable(),
  sandboxSecretKeyEnc: z.string().nullable(),
}) satisfies z.ZodType<ShopCredentials>;

/** What a payment session needs of its shop. */
export type SessionShop = ShopCredentials & Pick<Shop, "uninstalledAt" | "testMode" | "checkoutMode" | "fixedCurrency" | "gatewayLanguage">;

const sessionShopSchema = credentialsSchema.extend({
  uninstalledAt: z.date().nullable(),
  testMode: z.boolean(),
  checkoutMode: z.string(),
  fixedCurrency: z.string().nullable(),
  gatewayLanguage: z.string(),
}) satisfies z.ZodType<SessionShop>;

/** Column names are the schema's keys: the list in the query cannot drift from what is checked. */
function columns(schema: z.AnyZodObject): Prisma.Sql {
  return Prisma.raw(
    Object.keys(schema.shape)
      .map((name) => `"${name}"`)
      .join(", "),
  );
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
 * A condition that holds while the shop's row still has exactly these values in every column
 * a payment session reads (the same keys as the read), for a write that must not go ahead on a
 * shop whose settings or credentials changed since.
 */
export function sessionShopUnchanged(kind: DatabaseKind, shop: SessionShop): Prisma.Sql {
  const same = Object.keys(sessionShopSchema.shape).map((name) => {
    const column = Prisma.raw(`"${name}"`);
    const value = shop[name as keyof SessionShop];
    if (value === null) return Prisma.sql`${column} IS NULL`;
    return Prisma.sql`${column} = ${value instanceof Date ? timeValue(kind, value) : value}`;
  });
  return Prisma.sql`EXISTS (SELECT 1 FROM "Shop" WHERE ${Prisma.join(same, " AND ")})`;
}

/**
 * The shops this instance last read for payment sessions, by domain, so that a session can
 * start without reading its shop first: its record is then written only if the row is
 * unchanged (sessionShopUnchanged, in the same statement), and otherwise the shop is read
 * again. It keeps only shops that can take payments (installed), the most recently used.
 */
export interface SessionShopMemory {
  recall(shopDomain: string): SessionShop | undefined;
  /** What a fresh read found: kept when installed, forgotten otherwise (null: no such shop). */
  remember(shopDomain: string, shop: SessionShop | null): void;
}

export function createSessionShopMemory(max = 10_000): SessionShopMemory {
  const shops = new LRUCache<string, SessionShop>({ max });
  return {
    recall: (shopDomain) => shops.get(shopDomain),
    remember(shopDomain, shop) {
      if (shop && !shop.uninstalledAt) shops.set(shopDomain, shop);
      else shops.delete(shopDomain);
    },
  };
}

/** The shop owning a gateway notification URL, with what verifying its signature needs. */
export function readShopByWebhookToken(sql: PlainSql, token: string): Promise<ShopCredentials | null> {
  return readOne(sql, credentialsSchema, Prisma.sql`"webhookToken" = ${token}`);
}
