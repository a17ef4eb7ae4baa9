// The shop's install and uninstall as its row records them, on SQLite and PostgreSQL: the
// install time the admin's session tokens raise (at most once a minute), an app/uninstalled
// that leaves alone a reinstall recorded while it is handled, the readiness a new install
// leaves to be sent again, a shop/redact that deletes a shop only when it follows the
// uninstall of the install the shop has (or when nothing tells which install it is about), and
// credentials never stored in a shop uninstalled meanwhile.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../app/db/database.server";
import { createLogger } from "../../app/lib/logger.server";
import { createCredentialCipher } from "../../app/shops/credential-cipher.server";
import { ensureShop, recordInstall, recordInstalledAsOf, REINSTALL_PROOF_AFTER_MS, replaceCredentials } from "../../app/shops/shop-credentials.server";
import { handleAppUninstalled, redactShop, SHOP_REDACT_DELAY_MS } from "../../app/shops/shopify-webhooks.server";
import { ROW_DATABASES, rowsDatabaseForFile } from "../support/row-databases";
import { startUninstalledShopify, type UninstalledShopify } from "../support/uninstalled-shopify";

const HOUR = 3_600_000;
const logger = createLogger({ level: "silent" });
// Shopify refuses every shop's token, as after an uninstall: what is tested here is what the rows decide.
let uninstalled: UninstalledShopify;
beforeAll(async () => void (uninstalled = await startUninstalledShopify()));
afterAll(() => uninstalled?.close());

/** The client, with `reinstall` landing once, just before the caller's first write (or transaction). */
function withReinstallBeforeFirstWrite(db: Database, reinstall: () => Promise<void>): { db: Database; landed: () => boolean } {
  let landed: Promise<void> | null = null;
  const first = () => (landed ??= reinstall());
  const writes = new Set<PropertyKey>(["create", "update", "updateMany", "upsert", "delete", "deleteMany"]);
  const watch = (delegate: object) =>
    new Proxy(delegate, {
      get(target, name) {
        const value: unknown = Reflect.get(target, name);
        if (typeof value !== "function") return value;
        if (!writes.has(name)) return value.bind(target);
        return async (...args: unknown[]) => {
          await first();
          return value.apply(target, args);
        };
      },
    });
  const watched = { shop: watch(db.shop), session: watch(db.session) };
  const racing = new Proxy(db, {
    get(target, name) {
      if (name === "shop" || name === "session") return watched[name];
      const value: unknown = Reflect.get(target, name);
      if (typeof value !== "function") return value;
      if (name !== "$transaction") return value.bind(target);
      return async (...args: unknown[]) => {
        await first();
        return value.apply(target, args);
      };
    },
  });
  return { db: racing, landed: () => landed !== null };
}

describe.each(ROW_DATABASES)("on $name", (database) => {
  let db: Database;
  let serial = 0;
  const rows = rowsDatabaseForFile(database, { shopDomain: "install-rows.myshopify.com", webhookToken: "install-rows-token-0001" });
  beforeAll(() => void ({ db } = rows()));

  const newShop = () => `install-rows-${++serial}.myshopify.com`;
  const shopRow = (shopDomain: string) => db.shop.findUnique({ where: { shopDomain } });
  const offlineSession = (shopDomain: string, accessToken: string) =>
    db.session.create({ data: { id: `offline_${shopDomain}`, shop: shopDomain, state: "", isOnline: false, accessToken, scope: "write_payment_gateways" } });

  it("a session token raises the install time to its issue time, once per token, and only for a shop installed now", async () => {
    const shopDomain = newShop();
    const installedAt = new Date(Date.now() - HOUR);
    await recordInstall(db, shopDomain, installedAt);

    // A later token writes its issue time; the same token again (every request until the next) writes nothing.
    const issuedAt = new Date(installedAt.getTime() + 50 * 60_000);
    expect(await recordInstalledAsOf(db, shopDomain, issuedAt)).toBe(true);
    expect(await recordInstalledAsOf(db, shopDomain, issuedAt)).toBe(false);
    expect((await shopRow(shopDomain))?.installedAt).toEqual(issuedAt);
    // The next token, seconds later, counts too: an uninstall may fall between the two.
    const next = new Date(issuedAt.getTime() + 25_000);
    expect(await recordInstalledAsOf(db, shopDomain, next)).toBe(true);
    expect((await shopRow(shopDomain))?.installedAt).toEqual(next);
    // An older token never lowers it.
    expect(await recordInstalledAsOf(db, shopDomain, installedAt)).toBe(false);
    expect((await shopRow(shopDomain))?.installedAt).toEqual(next);

    // A row with no install time (kept from before it was recorded) takes the token's.
    await db.shop.update({ where: { shopDomain }, data: { installedAt: null } });
    expect(await recordInstalledAsOf(db, shopDomain, issuedAt)).toBe(true);
    expect((await shopRow(shopDomain))?.installedAt).toEqual(issuedAt);

    // An uninstalled shop, or one the app has no row for, is not marked installed by it.
    await db.shop.update({ where: { shopDomain }, data: { uninstalledAt: new Date() } });
    expect(await recordInstalledAsOf(db, shopDomain, new Date())).toBe(false);
    expect((await shopRow(shopDomain))?.installedAt).toEqual(issuedAt);
    expect(await recordInstalledAsOf(db, newShop(), new Date())).toBe(false);

    // A token issued well after the uninstall (more than a token's life and any clock skew)
    // proves the app was installed again, even with no afterAuth: installed, and not ready.
    const uninstalledAt = (await shopRow(shopDomain))!.uninstalledAt!;
    await db.shop.update({ where: { shopDomain }, data: { paymentsAppReady: true } });
    expect(await recordInstalledAsOf(db, shopDomain, new Date(uninstalledAt.getTime() + REINSTALL_PROOF_AFTER_MS - 1_000))).toBe(false);
    expect((await shopRow(shopDomain))?.uninstalledAt).toEqual(uninstalledAt);
    const reinstalledAt = new Date(uninstalledAt.getTime() + REINSTALL_PROOF_AFTER_MS + 1_000);
    expect(await recordInstalledAsOf(db, shopDomain, reinstalledAt)).toBe(true);
    expect(await shopRow(shopDomain)).toMatchObject({ uninstalledAt: null, installedAt: reinstalledAt, paymentsAppReady: false });
  });

  it("an uninstall triggered before the session token of a reinstall leaves the new install alone; one triggered after it is carried out", async () => {
    const shopDomain = newShop();
    await recordInstall(db, shopDomain, new Date(Date.now() - HOUR));
    await offlineSession(shopDomain, "shpat_first_install");
    const uninstalledAt = new Date(Date.now() - 10 * 60_000);
    // The merchant installed the app again and opened it; the stored token was reused.
    await recordInstalledAsOf(db, shopDomain, new Date());
    await db.shop.update({ where: { shopDomain }, data: { liveDeviceKeyEnc: "sealed-device", liveSecretKeyEnc: "sealed-secret" } });

    await handleAppUninstalled({ db, logger, shopify: uninstalled.directory, clock: { now: () => new Date() } }, shopDomain, uninstalledAt);
    const kept = await shopRow(shopDomain);
    expect({ uninstalled: kept?.uninstalledAt !== null, liveCredentials: kept?.liveDeviceKeyEnc !== null, sessions: await db.session.count({ where: { shop: shopDomain } }) }).toEqual({
      uninstalled: false,
      liveCredentials: true,
      sessions: 1,
    });

    await handleAppUninstalled({ db, logger, shopify: uninstalled.directory, clock: { now: () => new Date() } }, shopDomain, new Date(Date.now() + 1_000));
    const gone = await shopRow(shopDomain);
    expect({ uninstalled: gone?.uninstalledAt !== null, liveCredentials: gone?.liveDeviceKeyEnc !== null, sessions: await db.session.count({ where: { shop: shopDomain } }) }).toEqual({
      uninstalled: true,
      liveCredentials: false,
      sessions: 0,
    });
  });

  it("a reinstall seconds after an uninstall, itself seconds after the last token, is told apart from it by its first token", async () => {
    const shopDomain = newShop();
    const t0 = Date.now() - 5 * 60_000;
    await recordInstall(db, shopDomain, new Date(t0 - HOUR));
    await offlineSession(shopDomain, "shpat_install");
    // The merchant works in the app at t0, uninstalls at t0 + 20 s (Shopify's app/uninstalled
    // is delayed) and installs again; the app opens at t0 + 45 s with the new install's token.
    expect(await recordInstalledAsOf(db, shopDomain, new Date(t0))).toBe(true);
    expect(await recordInstalledAsOf(db, shopDomain, new Date(t0 + 45_000))).toBe(true);
    await db.shop.update({ where: { shopDomain }, data: { liveDeviceKeyEnc: "sealed-device", liveSecretKeyEnc: "sealed-secret" } });

    await handleAppUninstalled({ db, logger, shopify: uninstalled.directory, clock: { now: () => new Date() } }, shopDomain, new Date(t0 + 20_000));
    const after = await db.shop.findUniqueOrThrow({ where: { shopDomain } });
    expect({ uninstalled: after.uninstalledAt !== null, liveCredentials: after.liveDeviceKeyEnc !== null, sessions: await db.session.count({ where: { shop: shopDomain } }) }).toEqual({
      uninstalled: false,
      liveCredentials: true,
      sessions: 1,
    });
  });

  it("a reinstall recorded while an uninstall triggered before it is being handled is not undone by it", async () => {
    const shopDomain = newShop();
    await recordInstall(db, shopDomain, new Date(Date.now() - HOUR));
    await offlineSession(shopDomain, "shpat_first_install");
    const uninstalledAt = new Date(Date.now() - 60_000);
    // After the uninstall's read of the shop, before its write: the merchant installs the app
    // again (a new offline token, then afterAuth) and connects the gateway.
    const racing = withReinstallBeforeFirstWrite(db, async () => {
      await db.session.update({ where: { id: `offline_${shopDomain}` }, data: { accessToken: "shpat_reinstall" } });
      await recordInstall(db, shopDomain, new Date());
      await db.shop.update({ where: { shopDomain }, data: { liveDeviceKeyEnc: "sealed-device", liveSecretKeyEnc: "sealed-secret" } });
    });

    await handleAppUninstalled({ db: racing.db, logger, shopify: uninstalled.directory, clock: { now: () => new Date() } }, shopDomain, uninstalledAt);
    expect(racing.landed()).toBe(true);
    const after = await shopRow(shopDomain);
    const sessions = await db.session.findMany({ where: { shop: shopDomain }, select: { accessToken: true } });
    expect({ uninstalled: after?.uninstalledAt !== null, liveCredentials: after?.liveDeviceKeyEnc !== null, sessions }).toEqual({
      uninstalled: false,
      liveCredentials: true,
      sessions: [{ accessToken: "shpat_reinstall" }],
    });
  });

  it("credentials stored across an uninstall are refused, and only Shopify's reinstall makes the shop installed again", async () => {
    const shopDomain = newShop();
    const cipher = createCredentialCipher([{ id: "k1", key: new Uint8Array(randomBytes(32)) }]);
    const credentials = { deviceKey: "5b0f3c1e-8d2a-4c7b-9e61-2f4a7d9c0b13", secretKeyHex: randomBytes(32).toString("hex") };
    const installedAt = new Date(Date.now() - HOUR);
    const read = await recordInstall(db, shopDomain, installedAt);
    // After the connection's read of the shop, before its write: the uninstall is handled.
    const racing = withReinstallBeforeFirstWrite(db, () => handleAppUninstalled({ db, logger, shopify: uninstalled.directory, clock: { now: () => new Date() } }, shopDomain, new Date()).then(() => undefined));

    expect(await replaceCredentials(racing.db, cipher, read, "live", credentials, new Date(), async () => false)).toBeNull();
    expect(racing.landed()).toBe(true);
    // The admin's read of the shop (adminShop) leaves it as it is.
    const after = await ensureShop(db, shopDomain);
    expect({ uninstalled: after.uninstalledAt !== null, installedAt: after.installedAt, liveCredentials: after.liveDeviceKeyEnc !== null }).toEqual({
      uninstalled: true,
      installedAt,
      liveCredentials: false,
    });

    const reinstalled = await recordInstall(db, shopDomain, new Date());
    expect(reinstalled.uninstalledAt).toBeNull();
    expect((await replaceCredentials(db, cipher, reinstalled, "live", credentials, new Date(), async () => false))?.shop.liveDeviceKeyEnc).not.toBeNull();
  });

  it("a new install leaves its readiness to be sent again, kept as it was, and so does an uninstall ignored for being from before it", async () => {
    const shopDomain = newShop();
    await recordInstall(db, shopDomain, new Date(Date.now() - HOUR));
    await db.shop.update({ where: { shopDomain }, data: { paymentsAppReady: true } });
    await recordInstall(db, shopDomain, new Date());
    expect(await shopRow(shopDomain)).toMatchObject({ paymentsAppReady: true, readinessUnconfirmed: true });

    // Told ready on the new install; then an uninstall from before it arrives. It may be the
    // only sign of the reinstall (the stored token was reused), so the readiness pass is woken.
    await db.shop.update({ where: { shopDomain }, data: { paymentsAppReady: true, readinessUnconfirmed: false } });
    let wakes = 0;
    await handleAppUninstalled({ db, logger, shopify: uninstalled.directory, clock: { now: () => new Date() }, notify: { readiness: () => wakes++ } }, shopDomain, new Date(Date.now() - 30 * 60_000));
    const row = await shopRow(shopDomain);
    expect({ uninstalled: row?.uninstalledAt !== null, ready: row?.paymentsAppReady, unconfirmed: row?.readinessUnconfirmed, wakes }).toEqual({ uninstalled: false, ready: true, unconfirmed: true, wakes: 1 });

    // An uninstall carried out leaves nothing for Shopify to hold.
    await db.shop.update({ where: { shopDomain }, data: { installedAt: new Date(Date.now() - HOUR) } });
    await handleAppUninstalled({ db, logger, shopify: uninstalled.directory, clock: { now: () => new Date() } }, shopDomain, new Date());
    expect(await shopRow(shopDomain)).toMatchObject({ paymentsAppReady: false, readinessUnconfirmed: false });
  });

  it("shop/redact deletes a shop unless it is installed now and was installed after the uninstall the redaction follows", async () => {
    const now = Date.now();
    const redactionOf = (uninstalledAt: number) => new Date(uninstalledAt + SHOP_REDACT_DELAY_MS);
    const shopWith = async (columns: { installedAt: Date | null; uninstalledAt: Date | null }) => {
      const shopDomain = newShop();
      await recordInstall(db, shopDomain, new Date(now - 30 * 24 * HOUR));
      await db.shop.update({ where: { shopDomain }, data: columns });
      await offlineSession(shopDomain, `shpat_${shopDomain}`);
      await db.outboxMessage.create({
        data: { shopDomain, kind: "app.configure", dedupeKey: `configure:${shopDomain}`, payload: JSON.stringify({ kind: "app.configure", ready: true, externalHandle: shopDomain }), nextAttemptAt: new Date() },
      });
      return shopDomain;
    };
    const held = async (shopDomain: string) => ({
      shop: (await db.shop.count({ where: { shopDomain } })) > 0,
      token: (await db.session.count({ where: { shop: shopDomain } })) > 0,
      outbox: (await db.outboxMessage.count({ where: { shopDomain } })) > 0,
    });
    const uninstall = now - 50 * HOUR;
    const cases: [string, { installedAt: Date | null; uninstalledAt: Date | null }, Date | null, boolean][] = [
      ["installed again after the uninstall (a retry delivered after the reinstall)", { installedAt: new Date(uninstall + HOUR), uninstalledAt: null }, redactionOf(uninstall), false],
      ["uninstall carried out, not installed again", { installedAt: new Date(uninstall - HOUR), uninstalledAt: new Date(uninstall) }, redactionOf(uninstall), true],
      ["uninstalled again after a reinstall", { installedAt: new Date(uninstall + HOUR), uninstalledAt: new Date(uninstall + 2 * HOUR) }, redactionOf(uninstall), true],
      ["app/uninstalled lost, never installed again", { installedAt: new Date(uninstall - 60_000), uninstalledAt: null }, redactionOf(uninstall), true],
      ["no install time recorded", { installedAt: null, uninstalledAt: null }, redactionOf(uninstall), true],
      ["installed now, no X-Shopify-Triggered-At", { installedAt: new Date(uninstall + HOUR), uninstalledAt: null }, null, true],
    ];
    for (const [what, columns, triggeredAt, deletes] of cases) {
      const shopDomain = await shopWith(columns);
      expect(await redactShop({ db, logger, shopify: uninstalled.directory, clock: { now: () => new Date() } }, shopDomain, triggeredAt), what).toBe(deletes ? "carried_out" : "ignored");
      expect(await held(shopDomain), what).toEqual(deletes ? { shop: false, token: false, outbox: false } : { shop: true, token: true, outbox: true });
    }
    // A shop the app holds no row for: what is left under its domain is deleted.
    const unknown = newShop();
    await offlineSession(unknown, "shpat_unknown");
    expect(await redactShop({ db, logger, shopify: uninstalled.directory, clock: { now: () => new Date() } }, unknown, redactionOf(uninstall))).toBe("carried_out");
    expect(await db.session.count({ where: { shop: unknown } })).toBe(0);
  });
});
