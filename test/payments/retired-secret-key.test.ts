// The webhook door and a retired Secret Key, on SQLite and PostgreSQL: the Secret Key of
// credentials taken out of use (removed, or replaced by another device, perhaps because it
// leaked) verifies the notifications of the payments begun on them alone, those of the shop's
// environment created before they were retired. Signed with it, a notification for any other
// order is refused as forged and recorded like the other refusals; the Secret Key in use
// verifies every order as before.
import { randomBytes, randomUUID } from "node:crypto";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseEnv } from "../../app/config/env.server";
import type { Database } from "../../app/db/database.server";
import { signWebhook } from "../../app/gateway/webhook-signature";
import { silentLogger } from "../../app/lib/logger.server";
import { receiveGatewayWebhook } from "../../app/payments/gateway-webhooks";
import { createServices, type AppServices } from "../../app/services.server";
import { beganOnRetiredCredentials } from "../../app/shops/credential-columns";
import { retireCredentials, storeCredentials } from "../../app/shops/shop-credentials.server";
import { createPayment, ROW_DATABASES, rowsDatabaseForFile } from "../support/row-databases";
import { refusalsCounted } from "../support/refusals";

const SHOP = "retired-secret.myshopify.com";
const TOKEN = "retired-secret-token-00001";
const CURRENT_SECRET = randomBytes(32).toString("hex");
const RETIRED_SECRET = randomBytes(32).toString("hex");

// The app's clock; whole seconds, as nonces are.
const clock = { at: new Date(Math.floor(Date.now() / 1000) * 1000), now: (): Date => clock.at };

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP, webhookToken: TOKEN });
  let db: Database;
  let shopId: string;
  let services: AppServices;
  let retiredAt: Date;

  beforeAll(() => {
    ({ db, shopId } = rows());
    services = createServices(parseEnv({ NODE_ENV: "test" }), { db, sql: rows().sql, clock, logger: silentLogger });
  });

  /** The live device whose Secret Key is `retiredSecret` is taken out of use now, and another connected in its place. */
  async function replaceDevice(retiredSecret: string): Promise<void> {
    const shop = await db.shop.findUniqueOrThrow({ where: { id: shopId } });
    const replaced = await storeCredentials(db, services.cipher, shop, "live", { deviceKey: randomUUID(), secretKeyHex: retiredSecret });
    await retireCredentials(db, replaced, "live", clock.now());
    await storeCredentials(db, services.cipher, replaced, "live", { deviceKey: randomUUID(), secretKeyHex: CURRENT_SECRET });
  }

  beforeEach(async () => {
    await db.gatewayWebhook.deleteMany({});
    await db.rejectedWebhook.deleteMany({});
    await db.payment.deleteMany({});
    retiredAt = clock.now();
    await replaceDevice(RETIRED_SECRET);
  });

  const notify = (secretHex: string, gatewayOrderId: string) => {
    const body = JSON.stringify({ identifier: gatewayOrderId, status: "CO", fiat_amount: 49.9, fiat_currency: "EUR" });
    const nonce = String(clock.now().getTime() / 1000);
    return receiveGatewayWebhook(services, { token: TOKEN, rawBody: new TextEncoder().encode(body), nonce, signature: signWebhook({ secretHex, nonce, rawBody: body }), maxNonceAgeSeconds: 300 });
  };
  const order = (createdAt: Date, columns: { gatewayEnv?: string; shopId?: string } = {}) =>
    createPayment({ ...rows(), shopId: columns.shopId ?? shopId }, { gatewayEnv: "live", gatewayOrderId: randomUUID(), createdAt, ...columns });
  const minute = (offset: number) => new Date(retiredAt.getTime() + offset * 60_000);

  it("verifies with the retired Secret Key only the orders of the payments begun on its credentials", async () => {
    const begunOnThem = await order(minute(-1));
    const begunSince = await order(retiredAt);
    const ofTheSandbox = await order(minute(-1), { gatewayEnv: "sandbox" });
    const other = await db.shop.create({ data: { shopDomain: "other.myshopify.com", webhookToken: "other-shop-token-00000001" } });
    const ofAnotherShop = await order(minute(-1), { shopId: other.id });
    try {
      expect(await notify(RETIRED_SECRET, begunOnThem.gatewayOrderId!)).toMatchObject({ status: 200 });
      for (const forged of [begunSince.gatewayOrderId!, ofTheSandbox.gatewayOrderId!, ofAnotherShop.gatewayOrderId!, randomUUID()]) {
        expect(await notify(RETIRED_SECRET, forged)).toEqual({ status: 401, reason: "bad_signature" });
      }
      // Each refusal is recorded, and nothing of them is stored.
      expect(await refusalsCounted(db, { shopId, reason: "bad_signature" })).toBe(4);
      expect((await db.gatewayWebhook.findMany({ select: { orderId: true } })).map((row) => row.orderId)).toEqual([begunOnThem.gatewayOrderId]);

      // The Secret Key in use verifies the order made since, as any other.
      expect(await notify(CURRENT_SECRET, begunSince.gatewayOrderId!)).toMatchObject({ status: 200 });

      // The same rule, for the reads of an order.
      const shop = await db.shop.findUniqueOrThrow({ where: { id: shopId } });
      expect(beganOnRetiredCredentials(shop, "live", begunOnThem)).toBe(true);
      expect(beganOnRetiredCredentials(shop, "live", begunSince)).toBe(false);
      expect(beganOnRetiredCredentials(shop, "sandbox", ofTheSandbox)).toBe(false);
    } finally {
      await db.payment.deleteMany({ where: { shopId: other.id } });
      await db.shop.delete({ where: { id: other.id } });
    }
  });
});
