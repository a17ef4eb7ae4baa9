// Two shops of a merchant on one gateway device, on SQLite and PostgreSQL: the gateway sends the
// device's notifications to the one notification URL set on it, here shop A's. A notification
// that came to A's URL for an order of shop B's payment is processed for B exactly as if it had
// come to B's own URL, but only when B's payment was made on that very device and the Secret Key
// B holds for it signed the notification too. Anything else is left as before: nothing reaches
// B, and A's own notifications are processed without a look at other shops' payments.
import { randomBytes, randomUUID } from "node:crypto";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Database } from "../../app/db/database.server";
import { signWebhook } from "../../app/gateway/webhook-signature";
import { receiveGatewayWebhook } from "../../app/payments/gateway-webhooks";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import type { AppServices } from "../../app/services.server";
import { retireCredentials, storeCredentials } from "../../app/shops/shop-credentials.server";
import type { Shop } from "../../generated/prisma/sqlite/client";
import { anotherShop, createPayment, ROW_DATABASES, rowsDatabaseForFile, servicesOverRows } from "../support/row-databases";

const SHOP_A = "shared-device-a.myshopify.com";
const TOKEN_A = "shared-device-token-a-0001";
const SHOP_B = "shared-device-b.myshopify.com";
const TOKEN_B = "shared-device-token-b-0001";
const DEVICE = randomUUID();
const SECRET = randomBytes(32).toString("hex");

// The app's clock; whole seconds, as nonces are.
const clock = { at: new Date(Math.floor(Date.now() / 1000) * 1000), now: (): Date => clock.at };

/** A gateway device's credentials. */
interface Device {
  deviceKey: string;
  secretKeyHex: string;
}
const SHARED: Device = { deviceKey: DEVICE, secretKeyHex: SECRET };
const anotherDevice = (): Device => ({ deviceKey: randomUUID(), secretKeyHex: randomBytes(32).toString("hex") });

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP_A, webhookToken: TOKEN_A });
  let db: Database;
  let services: AppServices;
  let shopA: string;
  let shopB: string;
  /** Every payment lookup the processing made, by its condition. */
  const paymentLookups: unknown[] = [];

  beforeAll(async () => {
    ({ db, shopId: shopA } = rows());
    // The payments lookups the processing makes are counted; every other call is the database's own.
    const bound = (owner: object, value: unknown) => (typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(owner) : value);
    const counted = new Proxy(db, {
      get(target, name) {
        const value: unknown = Reflect.get(target, name);
        if (name !== "payment") return bound(target, value);
        const payments = value as object;
        return new Proxy(payments, {
          get(_delegate, method) {
            const call = bound(payments, Reflect.get(payments, method));
            if (method !== "findMany" || typeof call !== "function") return call;
            return (args: { where?: unknown }) => {
              paymentLookups.push(args.where);
              return (call as (args: unknown) => unknown)(args);
            };
          },
        });
      },
    });
    services = servicesOverRows(rows(), { clock, db: counted });
    shopB = await anotherShop(rows(), { shopDomain: SHOP_B, webhookToken: TOKEN_B }, clock.now());
  });

  beforeEach(async () => {
    await db.gatewayWebhook.deleteMany({});
    await db.payment.deleteMany({});
    await db.outboxMessage.deleteMany({});
    paymentLookups.length = 0;
    await db.shop.updateMany({
      data: {
        uninstalledAt: null,
        liveDeviceKeyEnc: null,
        liveSecretKeyEnc: null,
        liveDeviceKeyHash: null,
        sandboxDeviceKeyEnc: null,
        sandboxSecretKeyEnc: null,
        sandboxDeviceKeyHash: null,
        sandboxRetiredDeviceKeyEnc: null,
        sandboxRetiredSecretKeyEnc: null,
        sandboxRetiredAt: null,
      },
    });
  });

  const shopRow = (id: string) => db.shop.findUniqueOrThrow({ where: { id } });
  const connect = async (id: string, device: Device): Promise<Shop> => storeCredentials(db, services.cipher, await shopRow(id), "sandbox", device);
  const paymentOf = (shopId: string, columns: { createdAt?: Date } = {}) =>
    createPayment({ ...rows(), shopId }, { gatewayOrderId: randomUUID(), createdAt: clock.now(), ...columns });

  /** Posts a completed notification for the order to a shop's URL, signed with `secretHex`, as the gateway does. */
  const notify = (token: string, secretHex: string, gatewayOrderId: string) => {
    const body = JSON.stringify({ identifier: gatewayOrderId, status: "CO", fiat_amount: 49.9, fiat_currency: "EUR" });
    const nonce = String(clock.now().getTime() / 1000);
    return receiveGatewayWebhook(services, { token, rawBody: new TextEncoder().encode(body), nonce, signature: signWebhook({ secretHex, nonce, rawBody: body }), maxNonceAgeSeconds: 300 });
  };
  const process = () => processWebhookInbox(services, { worker: "t" });
  const webhooksOf = (shopId: string) => db.gatewayWebhook.findMany({ where: { shopId }, orderBy: { receivedAt: "asc" } });
  const lookupsOfOtherShops = () => paymentLookups.filter((where) => JSON.stringify(where).includes('"shopId":{"not"'));

  it("a notification that came to shop A's URL for shop B's order on the same device settles B's payment as if it had come to B's URL", async () => {
    await connect(shopA, SHARED);
    await connect(shopB, SHARED);
    const payment = await paymentOf(shopB);

    expect(await notify(TOKEN_A, SECRET, payment.gatewayOrderId!)).toMatchObject({ status: 200 });
    const [received] = await webhooksOf(shopA);
    await process();
    // Looked up because A has no payment with that order.
    expect(lookupsOfOtherShops()).toHaveLength(1);

    // A's row is done with, and says where it went without naming the other shop.
    const atA = await db.gatewayWebhook.findUniqueOrThrow({ where: { id: received!.id } });
    expect(atA.processedAt).not.toBeNull();
    expect(atA.lastError).toBe("passed on to another shop's payment on the same device");
    expect(atA.lastError).not.toContain(SHOP_B);
    // B's inbox holds the very notification, as received.
    const [atB] = await webhooksOf(shopB);
    expect(atB).toMatchObject({ gatewayEnv: "sandbox", nonce: received!.nonce, signature: received!.signature, rawBody: received!.rawBody, orderId: payment.gatewayOrderId, status: "CO" });
    expect(atB!.receivedAt.getTime()).toBe(received!.receivedAt.getTime());

    // Processed as B's own: a signed final status that agrees with the payment settles it, to be checked by the next listing.
    await process();
    const settled = await db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(settled).toMatchObject({ state: "paid", gatewayStatus: "CO" });
    expect(settled.unverifiedSince).not.toBeNull();
    expect((await db.gatewayWebhook.findUniqueOrThrow({ where: { id: atB!.id } })).processedAt).not.toBeNull();
    // Passed on once more (a pass that lost its claim to another), it is stored once.
    await db.gatewayWebhook.update({ where: { id: received!.id }, data: { processedAt: null, lastError: null } });
    await process();
    expect(await db.gatewayWebhook.count({ where: { shopId: shopB } })).toBe(1);
    expect((await db.gatewayWebhook.findUniqueOrThrow({ where: { id: received!.id } })).processedAt).not.toBeNull();
  });

  it("a shop's notifications of its own payments are processed without a look at other shops' payments", async () => {
    await connect(shopA, SHARED);
    await connect(shopB, SHARED);
    const own = await paymentOf(shopA);

    expect(await notify(TOKEN_A, SECRET, own.gatewayOrderId!)).toMatchObject({ status: 200 });
    await process();

    expect((await db.payment.findUniqueOrThrow({ where: { id: own.id } })).state).toBe("paid");
    expect(lookupsOfOtherShops()).toEqual([]);
    expect(await db.gatewayWebhook.count({ where: { shopId: shopB } })).toBe(0);
  });

  describe("nothing reaches shop B's payment", () => {
    it.each([
      {
        case: "when B connected another device, even with the same Secret Key",
        setUp: async () => {
          await connect(shopA, SHARED);
          await connect(shopB, { deviceKey: randomUUID(), secretKeyHex: SECRET });
        },
      },
      {
        case: "when B holds another Secret Key for the same device (so B's Secret Key did not sign it)",
        setUp: async () => {
          await connect(shopA, SHARED);
          await connect(shopB, { deviceKey: DEVICE, secretKeyHex: randomBytes(32).toString("hex") });
        },
      },
      {
        case: "when B is uninstalled",
        setUp: async () => {
          await connect(shopA, SHARED);
          await connect(shopB, SHARED);
          await db.shop.update({ where: { id: shopB }, data: { uninstalledAt: clock.now() } });
        },
      },
      {
        case: "when B has no credentials",
        setUp: async () => {
          await connect(shopA, SHARED);
        },
      },
    ])("$case", async ({ setUp }) => {
      await setUp();
      const payment = await paymentOf(shopB);

      expect(await notify(TOKEN_A, SECRET, payment.gatewayOrderId!)).toMatchObject({ status: 200 });
      await process();
      await process();

      expect(await db.gatewayWebhook.count({ where: { shopId: shopB } })).toBe(0);
      expect((await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).state).toBe("awaiting_payment");
      // Handled as one for an order no shop has: waited for a while, so shop A learns nothing of B's orders.
      const [atA] = await webhooksOf(shopA);
      expect(atA).toMatchObject({ processedAt: null, lastError: "gateway order not known yet" });
    });

    it("when B's payment is of the other environment", async () => {
      await connect(shopA, SHARED);
      await connect(shopB, SHARED);
      await storeCredentials(db, services.cipher, await shopRow(shopB), "live", SHARED);
      const live = await createPayment({ ...rows(), shopId: shopB }, { gatewayEnv: "live", gatewayOrderId: randomUUID() });

      expect(await notify(TOKEN_A, SECRET, live.gatewayOrderId!)).toMatchObject({ status: 200 });
      await process();

      expect(await db.gatewayWebhook.count({ where: { shopId: shopB } })).toBe(0);
      expect((await db.payment.findUniqueOrThrow({ where: { id: live.id } })).state).toBe("awaiting_payment");
      // As before: an order no payment of the shop has is waited for a while (its creation answer may still be on its way).
      const [atA] = await webhooksOf(shopA);
      expect(atA).toMatchObject({ processedAt: null, lastError: "gateway order not known yet" });
    });

    it("when the notification is signed with a Secret Key shop A holds but B does not, whatever the device", async () => {
      const aOwn = anotherDevice();
      await connect(shopA, { deviceKey: DEVICE, secretKeyHex: aOwn.secretKeyHex });
      await connect(shopB, SHARED);
      const payment = await paymentOf(shopB);

      expect(await notify(TOKEN_A, aOwn.secretKeyHex, payment.gatewayOrderId!)).toMatchObject({ status: 200 });
      await process();
      await process();

      expect(await db.gatewayWebhook.count({ where: { shopId: shopB } })).toBe(0);
      expect((await db.payment.findUniqueOrThrow({ where: { id: payment.id } })).state).toBe("awaiting_payment");
    });
  });

  it("a payment B began on the shared device before connecting one of its own still gets that device's notifications; one made on B's own device does not", async () => {
    await connect(shopA, SHARED);
    await connect(shopB, SHARED);
    const before = await paymentOf(shopB, { createdAt: new Date(clock.now().getTime() - 60_000) });
    // B connects a device of its own, keeping the shared one's credentials for the payment begun on it.
    expect(await retireCredentials(db, await shopRow(shopB), "sandbox", clock.now())).toBe(true);
    await connect(shopB, anotherDevice());
    const since = await paymentOf(shopB);

    expect(await notify(TOKEN_A, SECRET, before.gatewayOrderId!)).toMatchObject({ status: 200 });
    expect(await notify(TOKEN_A, SECRET, since.gatewayOrderId!)).toMatchObject({ status: 200 });
    await process();

    // Only the notification of the payment begun on the shared device reaches B.
    expect((await webhooksOf(shopB)).map((hook) => hook.orderId)).toEqual([before.gatewayOrderId]);
    expect((await db.payment.findUniqueOrThrow({ where: { id: since.id } })).state).toBe("awaiting_payment");
  });
});
