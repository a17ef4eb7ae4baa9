// Two installed shops and gateway notifications for each other's orders, on SQLite and
// PostgreSQL: what the receiving shop can observe of another shop's payments, and which
// notifications reach the shop whose payment has the order.
import { randomBytes, randomUUID } from "node:crypto";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { shopHealth } from "../../app/admin/health.server";
import type { Database } from "../../app/db/database.server";
import { signWebhook } from "../../app/gateway/webhook-signature";
import { receiveGatewayWebhook } from "../../app/payments/gateway-webhooks";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import type { AppServices } from "../../app/services.server";
import { NO_CREDENTIALS, NO_RETIRED_CREDENTIALS } from "../../app/shops/credential-columns";
import { replaceCredentials, storeCredentials } from "../../app/shops/shop-credentials.server";
import type { Shop } from "../../generated/prisma/sqlite/client";
import { anotherShop, createPayment, ROW_DATABASES, rowsDatabaseForFile, servicesOverRows } from "../support/row-databases";

const SHOP_A = "pass-on-a.myshopify.com";
const TOKEN_A = "pass-on-token-a-00000001";
const SHOP_B = "pass-on-b.myshopify.com";
const TOKEN_B = "pass-on-token-b-00000001";

// The app's clock; whole seconds, as nonces are.
const clock = { at: new Date(Math.floor(Date.now() / 1000) * 1000), now: (): Date => clock.at };

interface Device {
  deviceKey: string;
  secretKeyHex: string;
}
const newDevice = (): Device => ({ deviceKey: randomUUID(), secretKeyHex: randomBytes(32).toString("hex") });

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP_A, webhookToken: TOKEN_A });
  let db: Database;
  let services: AppServices;
  let shopA: string;
  let shopB: string;

  beforeAll(async () => {
    ({ db, shopId: shopA } = rows());
    services = servicesOverRows(rows(), { clock });
    shopB = await anotherShop(rows(), { shopDomain: SHOP_B, webhookToken: TOKEN_B }, clock.now());
  });

  beforeEach(async () => {
    await db.gatewayWebhook.deleteMany({});
    await db.rejectedWebhook.deleteMany({});
    await db.payment.deleteMany({});
    await db.outboxMessage.deleteMany({});
    await db.shop.updateMany({ data: { uninstalledAt: null, ...NO_CREDENTIALS.live, ...NO_CREDENTIALS.sandbox, ...NO_RETIRED_CREDENTIALS.live, ...NO_RETIRED_CREDENTIALS.sandbox } });
  });

  const shopRow = (id: string) => db.shop.findUniqueOrThrow({ where: { id } });
  const connect = async (id: string, device: Device): Promise<Shop> => storeCredentials(db, services.cipher, await shopRow(id), "sandbox", device);
  const paymentOf = (shopId: string, columns: { createdAt?: Date } = {}) =>
    createPayment({ ...rows(), shopId }, { gatewayOrderId: randomUUID(), createdAt: clock.now(), ...columns });

  /** Posts `bytes` as a notification to a shop's URL, signed over those very bytes with `secretHex`. */
  const notifyBytes = (token: string, secretHex: string, bytes: Uint8Array) => {
    const nonce = String(clock.now().getTime() / 1000);
    return receiveGatewayWebhook(services, { token, rawBody: bytes, nonce, signature: signWebhook({ secretHex, nonce, rawBody: bytes }), maxNonceAgeSeconds: 300 });
  };
  /** Posts a notification for the order to a shop's URL, signed with `secretHex`. */
  const notify = (token: string, secretHex: string, gatewayOrderId: string, status = "CO") =>
    notifyBytes(token, secretHex, new TextEncoder().encode(JSON.stringify({ identifier: gatewayOrderId, status, fiat_amount: 49.9, fiat_currency: "EUR" })));
  const process = () => processWebhookInbox(services, { worker: "t" });
  const webhooksOf = (shopId: string) => db.gatewayWebhook.findMany({ where: { shopId }, orderBy: { receivedAt: "asc" } });

  it("a notification a shop signs itself for an order of another shop's payment on another device is handled like one for an order no shop has", async () => {
    // Shop A holds its own device's Secret Key, so it can sign anything for its own URL.
    const aOwn = newDevice();
    await connect(shopA, aOwn);
    await connect(shopB, newDevice());
    // An order of shop B (its identifier is in the gateway's payment page address a shopper of B sees).
    const ofB = await paymentOf(shopB);
    const ofNobody = randomUUID();

    expect(await notify(TOKEN_A, aOwn.secretKeyHex, ofB.gatewayOrderId!)).toMatchObject({ status: 200 });
    expect(await notify(TOKEN_A, aOwn.secretKeyHex, ofNobody)).toMatchObject({ status: 200 });
    await process();

    // Nothing reaches B.
    expect(await db.gatewayWebhook.count({ where: { shopId: shopB } })).toBe(0);
    expect((await db.payment.findUniqueOrThrow({ where: { id: ofB.id } })).state).toBe("awaiting_payment");
    // And A cannot tell the two apart: both are waited for the same way...
    const atA = await webhooksOf(shopA);
    const forB = atA.find((hook) => hook.orderId === ofB.gatewayOrderId)!;
    const forNobody = atA.find((hook) => hook.orderId === ofNobody)!;
    expect({ processed: forB.processedAt !== null, note: forB.lastError }).toEqual({ processed: forNobody.processedAt !== null, note: forNobody.lastError });
    // ...so A's health page (notifications waiting, failing) says nothing about whether the order is another shop's.
    const health = await shopHealth(services, await shopRow(shopA));
    expect(health.inboxBacklog).toBe(2);
  });

  it("a notification whose body begins with a byte-order mark is stored as its bytes, so it verifies again when passed on to the shop whose payment has the order", async () => {
    const shared = newDevice();
    await connect(shopA, shared);
    await connect(shopB, shared);
    const payment = await paymentOf(shopB);
    const body = JSON.stringify({ identifier: payment.gatewayOrderId, status: "CO", fiat_amount: 49.9, fiat_currency: "EUR" });
    const withMark = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(body)]);

    expect(await notifyBytes(TOKEN_A, shared.secretKeyHex, withMark)).toMatchObject({ status: 200 });
    await process();
    expect((await webhooksOf(shopB)).map((hook) => hook.orderId)).toEqual([payment.gatewayOrderId]);
    expect((await webhooksOf(shopA))[0]!.lastError).toBe("passed on to another shop's payment on the same device");
  });

  it("a signed notification whose body is not UTF-8 is refused 400 as malformed, and nothing is stored", async () => {
    const own = newDevice();
    await connect(shopA, own);
    const payment = await paymentOf(shopA);
    const body = new TextEncoder().encode(JSON.stringify({ identifier: payment.gatewayOrderId, status: "CO", fiat_amount: 49.9, fiat_currency: "EUR", notes: "x" }));
    // The "x" of the notes replaced by a byte UTF-8 never has.
    const broken = body.map((byte, i, all) => (byte === 0x78 && all[i - 1] === 0x22 && all[i + 1] === 0x22 ? 0xff : byte));
    expect(broken).not.toEqual(body);

    expect(await notifyBytes(TOKEN_A, own.secretKeyHex, broken)).toMatchObject({ status: 400, reason: "malformed_payload" });
    expect(await db.gatewayWebhook.count()).toBe(0);
  });

  it("after the shared device's Secret Key is renewed and both shops hold the new one, a notification signed with it for a payment of the other shop begun before reaches that payment", async () => {
    const old = newDevice();
    await connect(shopA, old);
    await connect(shopB, old);
    // B's payment on the shared device, in progress when the Secret Key is renewed.
    const payment = await paymentOf(shopB, { createdAt: new Date(clock.now().getTime() - 60_000) });

    // The merchant renews the device's Secret Key in the gateway dashboard and enters it in both
    // shops. B keeps the earlier pair for its payment in progress; A had none in progress.
    const renewed: Device = { deviceKey: old.deviceKey, secretKeyHex: randomBytes(32).toString("hex") };
    const atB = await replaceCredentials(db, services.cipher, await shopRow(shopB), "sandbox", renewed, clock.now(), async () => true);
    expect(atB?.replaced).toBe("retired");
    const atA = await replaceCredentials(db, services.cipher, await shopRow(shopA), "sandbox", renewed, clock.now(), async () => false);
    expect(atA?.replaced).toBe("deleted");

    // B's own URL takes a notification of that payment signed with the renewed Secret Key.
    expect(await notify(TOKEN_B, renewed.secretKeyHex, payment.gatewayOrderId!, "PE")).toMatchObject({ status: 200 });
    await db.gatewayWebhook.deleteMany({ where: { shopId: shopB } });

    // The device's notifications come to A's URL, signed with the renewed Secret Key.
    expect(await notify(TOKEN_A, renewed.secretKeyHex, payment.gatewayOrderId!)).toMatchObject({ status: 200 });
    await process();

    // The Secret Key B holds for that very device signed it: it is passed on as if it had come to B's URL.
    expect((await webhooksOf(shopB)).map((hook) => hook.orderId)).toEqual([payment.gatewayOrderId]);
    const [received] = await webhooksOf(shopA);
    expect(received!.lastError).toBe("passed on to another shop's payment on the same device");
  });

  it("once the shop the shared device notifies connects a device of its own, the device's notifications of the other shop's payments are refused there, and its health page says what to do", async () => {
    const shared = newDevice();
    await connect(shopA, shared);
    await connect(shopB, shared);
    const payment = await paymentOf(shopB);
    // A follows the advice and connects a device of its own; the shared device still notifies A's URL.
    await connect(shopA, newDevice());

    expect(await notify(TOKEN_A, shared.secretKeyHex, payment.gatewayOrderId!)).toMatchObject({ status: 401 });

    const health = await shopHealth(services, await shopRow(shopA));
    const refused = health.rejected.find((row) => row.reason === "bad_signature");
    expect(refused?.count).toBe(1);
    expect(refused?.description).toContain("a device this shop no longer uses whose notification URL is still this shop's: set that device's URL to the shop that uses it");
  });
});
