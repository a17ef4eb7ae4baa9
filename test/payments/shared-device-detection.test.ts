// Knowing, on SQLite and PostgreSQL, when two installed shops use the same gateway device in the
// same environment: each shop row keeps a digest of each environment's device key in use (never
// the key), written with the credentials and emptied with them. Shops saved before the digests
// were kept, and rows an instance of the release before wrote during a rolling deploy, are
// brought in line by the readiness pass.
import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { devicesUsedByAnotherShop } from "../../app/admin/connection.server";
import type { Database } from "../../app/db/database.server";
import { hashDeviceKey } from "../../app/gateway/quota";
import { silentLogger } from "../../app/lib/logger.server";
import type { AppServices } from "../../app/services.server";
import { NO_CREDENTIALS } from "../../app/shops/credential-columns";
import { handleAppUninstalled } from "../../app/shops/shopify-webhooks.server";
import {
  credentialContext,
  deleteCredentials,
  deviceKeyHash,
  recordDeviceKeyHashes,
  replaceCredentials,
  retireCredentials,
  storeCredentials,
} from "../../app/shops/shop-credentials.server";
import type { Shop } from "../../generated/prisma/sqlite/client";
import { anotherShop, ROW_DATABASES, rowsDatabaseForFile, servicesOverRows } from "../support/row-databases";
import { startUninstalledShopify, type UninstalledShopify } from "../support/uninstalled-shopify";

const SHOP_A = "device-digest-a.myshopify.com";
const SHOP_B = "device-digest-b.myshopify.com";
const clock = { now: () => new Date() };
const device = () => ({ deviceKey: randomUUID(), secretKeyHex: randomBytes(32).toString("hex") });

// Shopify refuses every shop's token, as after an uninstall: the uninstalls here are real.
let uninstalled: UninstalledShopify;
beforeAll(async () => void (uninstalled = await startUninstalledShopify()));
afterAll(() => uninstalled?.close());

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP_A, webhookToken: "device-digest-token-a-0001" });
  let db: Database;
  let services: AppServices;
  let shopA: string;
  let shopB: string;

  beforeAll(async () => {
    ({ db, shopId: shopA } = rows());
    services = servicesOverRows(rows(), { clock });
    shopB = await anotherShop(rows(), { shopDomain: SHOP_B, webhookToken: "device-digest-token-b-0001" }, clock.now());
  });

  beforeEach(async () => {
    await db.shop.updateMany({ data: { uninstalledAt: null, ...NO_CREDENTIALS.live, ...NO_CREDENTIALS.sandbox } });
  });

  const shopRow = (id: string) => db.shop.findUniqueOrThrow({ where: { id } });
  const connect = async (id: string, env: "live" | "sandbox", credentials: { deviceKey: string; secretKeyHex: string }): Promise<Shop> =>
    storeCredentials(db, services.cipher, await shopRow(id), env, credentials);
  const sharedAsSeenBy = async (id: string) => devicesUsedByAnotherShop(db, services.gateways, await shopRow(id));

  it("a device key's digest is written with the credentials, never the key itself, and emptied whenever they are removed", async () => {
    const first = device();
    const stored = await connect(shopA, "live", first);
    expect(stored.liveDeviceKeyHash).toBe(deviceKeyHash(first.deviceKey));
    expect(stored.liveDeviceKeyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.liveDeviceKeyHash).not.toContain(first.deviceKey);
    // Not the quota's digest of the same key either: each names the device for its own purpose.
    expect(stored.liveDeviceKeyHash).not.toBe(hashDeviceKey(first.deviceKey));
    expect(stored.sandboxDeviceKeyHash).toBeNull();

    // Another device connected in its place.
    const second = device();
    const replaced = await replaceCredentials(db, services.cipher, stored, "live", second, clock.now(), async () => false);
    expect(replaced?.shop.liveDeviceKeyHash).toBe(deviceKeyHash(second.deviceKey));

    // Removed while payments on it are followed (kept, retired), or deleted outright.
    expect(await retireCredentials(db, replaced!.shop, "live", clock.now())).toBe(true);
    expect((await shopRow(shopA)).liveDeviceKeyHash).toBeNull();
    const again = await connect(shopA, "live", second);
    expect(again.liveDeviceKeyHash).toBe(deviceKeyHash(second.deviceKey));
    expect(await deleteCredentials(db, again, "live")).toBe(true);
    expect((await shopRow(shopA)).liveDeviceKeyHash).toBeNull();

    // An uninstall deletes every credential, and every digest with them.
    await connect(shopA, "sandbox", first);
    await handleAppUninstalled({ db, logger: silentLogger, shopify: uninstalled.directory, clock }, SHOP_A);
    expect(await shopRow(shopA)).toMatchObject({ liveDeviceKeyHash: null, sandboxDeviceKeyHash: null });
  });

  it("another installed shop with the same device key in the same environment is found; another key, another environment or an uninstalled shop is not", async () => {
    const shared = device();
    await connect(shopA, "sandbox", shared);
    expect(await sharedAsSeenBy(shopA)).toEqual({ live: false, sandbox: false });

    // The same key in the other environment is another device.
    await connect(shopB, "live", shared);
    expect(await sharedAsSeenBy(shopA)).toEqual({ live: false, sandbox: false });
    await connect(shopB, "sandbox", device());
    expect(await sharedAsSeenBy(shopA)).toEqual({ live: false, sandbox: false });

    // The same key in the same environment, whatever the Secret Key: both shops are told.
    await connect(shopB, "sandbox", { deviceKey: shared.deviceKey, secretKeyHex: randomBytes(32).toString("hex") });
    expect(await sharedAsSeenBy(shopA)).toEqual({ live: false, sandbox: true });
    expect(await sharedAsSeenBy(shopB)).toEqual({ live: false, sandbox: true });

    // An uninstalled shop uses no device (even one whose row an earlier release left with a digest).
    await db.shop.update({ where: { id: shopB }, data: { uninstalledAt: clock.now() } });
    expect(await sharedAsSeenBy(shopA)).toEqual({ live: false, sandbox: false });
  });

  it("the readiness pass writes the digests of shops saved before they were kept, corrects those an earlier release left behind, and empties those of removed credentials", async () => {
    const shared = device();
    await connect(shopA, "sandbox", shared);
    await connect(shopB, "sandbox", shared);
    // As saved before digests were kept: B's sandbox device has none.
    await db.shop.update({ where: { id: shopB }, data: { sandboxDeviceKeyHash: null } });
    // As an instance of the release before connects a device: B's live device replaced by the one
    // A uses (sealed anew), and the previous device's digest left in place.
    const previous = device();
    const live = device();
    await connect(shopB, "live", previous);
    await connect(shopA, "live", live);
    await db.shop.update({ where: { id: shopB }, data: { liveDeviceKeyEnc: services.cipher.encrypt(live.deviceKey, credentialContext(shopB, "live", "device-key")) } });

    // Until the pass, B's own page knows (its digest is made from its key as it reads now), A's does not.
    expect(await sharedAsSeenBy(shopA)).toEqual({ live: false, sandbox: false });
    expect(await sharedAsSeenBy(shopB)).toEqual({ live: true, sandbox: true });

    expect(await recordDeviceKeyHashes(db, services.cipher)).toBe(2);
    expect(await shopRow(shopB)).toMatchObject({ liveDeviceKeyHash: deviceKeyHash(live.deviceKey), sandboxDeviceKeyHash: deviceKeyHash(shared.deviceKey) });
    expect(await sharedAsSeenBy(shopA)).toEqual({ live: true, sandbox: true });
    // Once in line, a pass writes nothing.
    expect(await recordDeviceKeyHashes(db, services.cipher)).toBe(0);

    // As an instance of the release before removes credentials: the digest is left behind. It
    // names no device in use (the credentials are gone), and the pass empties it.
    await db.shop.update({ where: { id: shopA }, data: { liveDeviceKeyEnc: null, liveSecretKeyEnc: null } });
    expect(await sharedAsSeenBy(shopB)).toEqual({ live: false, sandbox: true });
    expect(await recordDeviceKeyHashes(db, services.cipher)).toBe(1);
    expect((await shopRow(shopA)).liveDeviceKeyHash).toBeNull();
    expect(await recordDeviceKeyHashes(db, services.cipher)).toBe(0);
  });
});
