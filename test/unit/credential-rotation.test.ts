// Re-sealing stored credentials and Shopify tokens with a new key while the shops keep changing,
// on SQLite and PostgreSQL: a removal, an uninstall, a replacement or a renewed token made
// between the rotation's read and its write stays as it was made, a value no configured key
// opens is reported by shop and left as it is, and everything else ends up under the new key.
// Then `npm run credentials:rotate` as the operator runs it: what it prints and its exit code.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Session } from "@shopify/shopify-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../app/db/database.server";
import { applyMigrations } from "../../app/db/migrate.server";
import { createLogger } from "../../app/lib/logger.server";
import { createCredentialCipher, type CredentialCipher } from "../../app/shops/credential-cipher.server";
import {
  credentialContext,
  deleteCredentials,
  ensureShop,
  rotateCredentialEncryption,
  sessionsOnOldKeys,
  shopsOnOldKeys,
  storeCredentials,
} from "../../app/shops/shop-credentials.server";
import { offlineSessionId } from "../../app/shops/shopify-directory.server";
import { createSealedSessionStorage } from "../../app/shops/shopify-sessions.server";
import { handleAppUninstalled } from "../../app/shops/shopify-webhooks.server";
import type { Shop } from "../../generated/prisma/sqlite/client";
import { ROW_DATABASES, rowsDatabaseForFile } from "../support/row-databases";
import { startUninstalledShopify, type UninstalledShopify } from "../support/uninstalled-shopify";

const key = (id: string) => ({ id, key: new Uint8Array(randomBytes(32)) });
const SEALED = ["liveDeviceKeyEnc", "liveSecretKeyEnc", "sandboxDeviceKeyEnc", "sandboxSecretKeyEnc"] as const;

/** The client, with `afterRead` run after each read of the table (shops unless told) returns and before the caller sees the rows. */
function withChangesAfterReads(db: Database, afterRead: () => Promise<void>, table: "shop" | "session" = "shop"): Database {
  const reads = new Set<PropertyKey>(["findMany", "findUnique", "findUniqueOrThrow", "findFirst", "findFirstOrThrow"]);
  const watched = new Proxy(db[table], {
    get(target, name) {
      const value: unknown = Reflect.get(target, name);
      if (typeof value !== "function") return value;
      if (!reads.has(name)) return value.bind(target);
      return async (...args: unknown[]) => {
        const rows: unknown = await value.apply(target, args);
        await afterRead();
        return rows;
      };
    },
  });
  return new Proxy(db, {
    get(target, name) {
      if (name === table) return watched;
      const value: unknown = Reflect.get(target, name);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

// Shopify refuses every shop's token, as after an uninstall: the uninstalls here are real.
let uninstalledShopify: UninstalledShopify;
beforeAll(async () => void (uninstalledShopify = await startUninstalledShopify()));
afterAll(() => uninstalledShopify?.close());

describe.each(ROW_DATABASES)("on $name", (database) => {
  let db: Database;
  let serial = 0;
  const rows = rowsDatabaseForFile(database, { shopDomain: "rotation.myshopify.com", webhookToken: "rotation-webhook-token-01" });
  beforeAll(() => void ({ db } = rows()));

  const oldKey = key("old");
  const newKey = key("new");
  // An instance before the new key, one that decrypts with it (the old key still encrypting), one after.
  const oldCipher = createCredentialCipher([oldKey]);
  const acceptingCipher = createCredentialCipher([oldKey, newKey]);
  const newCipher = createCredentialCipher([newKey, oldKey]);

  const credentials = (device: string) => ({ deviceKey: `device-${device}`, secretKeyHex: randomBytes(32).toString("hex") });

  async function shopWith(cipher: CredentialCipher, live: { deviceKey: string; secretKeyHex: string }, sandbox?: { deviceKey: string; secretKeyHex: string }): Promise<Shop> {
    let shop = await storeCredentials(db, cipher, await ensureShop(db, `rotation-${++serial}.myshopify.com`), "live", live);
    if (sandbox) shop = await storeCredentials(db, cipher, shop, "sandbox", sandbox);
    return shop;
  }

  const stored = (shop: Shop) => db.shop.findUniqueOrThrow({ where: { id: shop.id } });

  function opened(shop: Shop, env: "live" | "sandbox") {
    const sealedKey = env === "live" ? shop.liveDeviceKeyEnc : shop.sandboxDeviceKeyEnc;
    const sealedSecret = env === "live" ? shop.liveSecretKeyEnc : shop.sandboxSecretKeyEnc;
    // Only the new key: what the rotation left must open once the old key is dropped.
    const afterwards = createCredentialCipher([newKey]);
    return {
      deviceKey: sealedKey && afterwards.decrypt(sealedKey, credentialContext(shop.id, env, "device-key")),
      secretKeyHex: sealedSecret && afterwards.decrypt(sealedSecret, credentialContext(shop.id, env, "secret-key")),
    };
  }

  it("keeps a removal, an uninstall and a replacement made while it runs, and re-seals every other credential", async () => {
    const untouched = { live: credentials("untouched-live"), sandbox: credentials("untouched-sandbox") };
    const quiet = await shopWith(oldCipher, untouched.live, untouched.sandbox);
    const keptSandbox = credentials("kept-sandbox");
    const removedLive = await shopWith(oldCipher, credentials("removed-live"), keptSandbox);
    const uninstalled = await shopWith(oldCipher, credentials("uninstalled"), credentials("uninstalled-sandbox"));
    const replaced = await shopWith(oldCipher, credentials("replaced-old"));
    const replacedOnOldKey = await shopWith(oldCipher, credentials("replaced-old-2"));
    const replacement = credentials("replacement");
    const replacementOnOldKey = credentials("replacement-2");

    // Right after the rotation has read the shops, before it writes any of them: the merchant
    // removes the live credentials, the app is uninstalled from another shop, and two
    // merchants connect a new device (one through an instance still encrypting with the old key).
    let raced = false;
    const racing = withChangesAfterReads(db, async () => {
      if (raced) return;
      raced = true;
      await deleteCredentials(db, removedLive, "live");
      await handleAppUninstalled({ db, logger: createLogger({ level: "silent" }), shopify: uninstalledShopify.directory, clock: { now: () => new Date() } }, uninstalled.shopDomain);
      await storeCredentials(db, newCipher, replaced, "live", replacement);
      await storeCredentials(db, acceptingCipher, replacedOnOldKey, "live", replacementOnOldKey);
    });
    // The quiet shop, the sandbox kept beside the removal, and the device saved with the old key.
    expect((await rotateCredentialEncryption(racing, newCipher)).shops).toBe(3);
    expect(raced).toBe(true);

    const afterRemoval = await stored(removedLive);
    expect([afterRemoval.liveDeviceKeyEnc, afterRemoval.liveSecretKeyEnc, afterRemoval.liveDeviceKeyHint]).toEqual([null, null, null]);
    expect(opened(afterRemoval, "sandbox")).toEqual(keptSandbox);

    const afterUninstall = await stored(uninstalled);
    expect(afterUninstall.uninstalledAt).not.toBe(null);
    for (const field of SEALED) expect(afterUninstall[field]).toBe(null);

    expect(opened(await stored(replaced), "live")).toEqual(replacement);
    expect((await stored(replaced)).liveDeviceKeyHint).toBe(replacement.deviceKey.slice(-4));
    expect(opened(await stored(replacedOnOldKey), "live")).toEqual(replacementOnOldKey);

    const afterQuiet = await stored(quiet);
    expect(opened(afterQuiet, "live")).toEqual(untouched.live);
    expect(opened(afterQuiet, "sandbox")).toEqual(untouched.sandbox);

    for (const shop of await db.shop.findMany()) {
      for (const field of SEALED) if (shop[field] !== null) expect(shop[field]!.split(":")[1]).toBe("new");
    }
    expect(await shopsOnOldKeys(db, newCipher)).toBe(0);
    expect((await rotateCredentialEncryption(db, newCipher)).shops).toBe(0);
  });

  it("leaves a shop whose credentials change on every read to the next run, without writing what it read", async () => {
    const restless = await shopWith(oldCipher, credentials("restless-0"));
    const calmCredentials = credentials("calm");
    const calm = await shopWith(oldCipher, calmCredentials);
    let latest = { deviceKey: "", secretKeyHex: "" };
    let changes = 0;
    // Each read is followed by a new device sealed with the old key, so no write of the rotation can match.
    const racing = withChangesAfterReads(db, async () => {
      latest = credentials(`restless-${++changes}`);
      await storeCredentials(db, oldCipher, restless, "live", latest);
    });

    expect((await rotateCredentialEncryption(racing, newCipher)).shops).toBe(1);
    expect(changes).toBeGreaterThan(1);
    const afterRace = await stored(restless);
    expect(acceptingCipher.decrypt(afterRace.liveDeviceKeyEnc!, credentialContext(restless.id, "live", "device-key"))).toBe(latest.deviceKey);
    expect(afterRace.liveDeviceKeyEnc!.split(":")[1]).toBe("old");
    expect(opened(await stored(calm), "live")).toEqual(calmCredentials);
    expect(await shopsOnOldKeys(db, newCipher)).toBe(1);

    // Once the shop is quiet again, the next run finishes it.
    expect((await rotateCredentialEncryption(db, newCipher)).shops).toBe(1);
    expect(opened(await stored(restless), "live")).toEqual(latest);
    expect(await shopsOnOldKeys(db, newCipher)).toBe(0);
  });

  it("reports a shop whose credential no configured key opens, leaves it as it is, and re-seals every other shop", async () => {
    // Sealed with a key no longer listed (a restored backup, an earlier rotation's leftover).
    const goneCipher = createCredentialCipher([key("gone")]);
    const broken = await storeCredentials(db, goneCipher, await ensureShop(db, `rotation-broken-${++serial}.myshopify.com`), "live", credentials("broken"));
    // Its sandbox credentials were saved later, with the old key: they open, and are re-sealed.
    const brokenSandbox = credentials("broken-sandbox");
    await storeCredentials(db, oldCipher, broken, "sandbox", brokenSandbox);
    const later = [credentials("later-0"), credentials("later-1")];
    const laterShops = [await shopWith(oldCipher, later[0]!), await shopWith(oldCipher, later[1]!)];
    const brokenBefore = await stored(broken);

    const report = await rotateCredentialEncryption(db, newCipher);

    expect(report).toEqual({ shops: 3, sessions: 0, unreadable: [{ shopDomain: broken.shopDomain, values: ["live device-key", "live secret-key"] }] });
    // The report names shops and values, never what they hold.
    expect(JSON.stringify(report)).not.toContain("device-broken");
    expect(opened(await stored(laterShops[0]!), "live")).toEqual(later[0]);
    expect(opened(await stored(laterShops[1]!), "live")).toEqual(later[1]);
    const brokenAfter = await stored(broken);
    expect([brokenAfter.liveDeviceKeyEnc, brokenAfter.liveSecretKeyEnc]).toEqual([brokenBefore.liveDeviceKeyEnc, brokenBefore.liveSecretKeyEnc]);
    expect(opened(brokenAfter, "sandbox")).toEqual(brokenSandbox);
    expect(await shopsOnOldKeys(db, newCipher)).toBe(1);

    // The merchant connects the gateway again: the next run has nothing left to report.
    await storeCredentials(db, newCipher, broken, "live", credentials("reconnected"));
    expect(await rotateCredentialEncryption(db, newCipher)).toEqual({ shops: 0, sessions: 0, unreadable: [] });
    expect(await shopsOnOldKeys(db, newCipher)).toBe(0);
  });

  it("seals Shopify tokens stored in clear, re-seals those on the old key, keeps a pair renewed while it runs, and reports one it cannot open", async () => {
    const session = (name: string) => {
      const shop = `rotation-${name}-${++serial}.myshopify.com`;
      const made = new Session({ id: offlineSessionId(shop), shop, state: "", isOnline: false, scope: "write_payment_sessions", accessToken: `shpat_${randomBytes(16).toString("hex")}` });
      made.refreshToken = `shprt_${randomBytes(16).toString("hex")}`;
      made.refreshTokenExpires = new Date(Date.now() + 86_400_000);
      made.expires = new Date(Date.now() + 3_600_000);
      return made;
    };
    const inClear = session("clear");
    await db.session.create({
      data: { id: inClear.id, shop: inClear.shop, state: "", isOnline: false, accessToken: inClear.accessToken!, refreshToken: inClear.refreshToken!, expires: inClear.expires! },
    });
    const onOldKey = session("old-key");
    await createSealedSessionStorage(db, oldCipher).storeSession(onOldKey);
    const renewing = session("renewing");
    await createSealedSessionStorage(db, oldCipher).storeSession(renewing);
    const unreadable = session("unreadable");
    await createSealedSessionStorage(db, createCredentialCipher([key("gone")])).storeSession(unreadable);
    const unreadableBefore = await db.session.findUniqueOrThrow({ where: { id: unreadable.id } });
    expect(await sessionsOnOldKeys(db, newCipher)).toBe(4);

    // Right after the rotation read the sessions, an instance still encrypting with the old key renews one shop's pair.
    const renewed = session("renewed");
    const pair = { accessToken: renewed.accessToken!, refreshToken: renewed.refreshToken! };
    let raced = false;
    const racing = withChangesAfterReads(
      db,
      async () => {
        if (raced) return;
        raced = true;
        await createSealedSessionStorage(db, acceptingCipher).storeSession(new Session({ ...renewing.toObject(), ...pair }));
      },
      "session",
    );

    const report = await rotateCredentialEncryption(racing, newCipher);

    expect(raced).toBe(true);
    expect(report).toEqual({ shops: 0, sessions: 3, unreadable: [{ shopDomain: unreadable.shop, values: ["Shopify access-token", "Shopify refresh-token"] }] });
    // Everything but the unreadable pair opens once the old key is dropped.
    const afterwards = createSealedSessionStorage(db, createCredentialCipher([newKey]));
    for (const [made, expected] of [
      [inClear, inClear],
      [onOldKey, onOldKey],
      [renewing, pair],
    ] as const) {
      const loaded = await afterwards.loadSession(made.id);
      expect({ accessToken: loaded?.accessToken, refreshToken: loaded?.refreshToken }).toEqual({ accessToken: expected.accessToken, refreshToken: expected.refreshToken });
    }
    const unreadableAfter = await db.session.findUniqueOrThrow({ where: { id: unreadable.id } });
    expect([unreadableAfter.accessToken, unreadableAfter.refreshToken]).toEqual([unreadableBefore.accessToken, unreadableBefore.refreshToken]);
    expect(await sessionsOnOldKeys(db, newCipher)).toBe(1);

    // The merchant opens the app: Shopify's token exchange stores a new pair, and nothing is left.
    await createSealedSessionStorage(db, newCipher).storeSession(unreadable);
    expect(await rotateCredentialEncryption(db, newCipher)).toEqual({ shops: 0, sessions: 0, unreadable: [] });
    expect(await sessionsOnOldKeys(db, newCipher)).toBe(0);
  });
});

describe("npm run credentials:rotate", () => {
  const encoded = (k: { id: string; key: Uint8Array }) => `${k.id}:${Buffer.from(k.key).toString("base64")}`;

  /** Runs the script as the operator does, on `databaseUrl` with `keys`; its output and exit code. */
  async function runRotation(databaseUrl: string, keys: string): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", "scripts/rotate-credentials.ts"], {
        env: { ...process.env, NODE_ENV: "development", DATABASE_URL: databaseUrl, CREDENTIALS_ENCRYPTION_KEYS: keys },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
    }
  }

  it("names the shops it could not open and exits with 1, goes on with the others, and exits with 0 once nothing is left", async () => {
    const url = `file:${join(mkdtempSync(join(tmpdir(), "rotate-script-")), "app.db")}`;
    await applyMigrations(url);
    const db = openDatabase(url);
    const [gone, oldKey, newKey] = [key("gone"), key("old"), key("new")];
    const secrets: string[] = [];
    const credentials = (name: string) => {
      const made = { deviceKey: `device-${name}-${randomBytes(4).toString("hex")}`, secretKeyHex: randomBytes(32).toString("hex") };
      secrets.push(made.deviceKey, made.secretKeyHex);
      return made;
    };
    const broken = await storeCredentials(db, createCredentialCipher([gone]), await ensureShop(db, "script-broken.myshopify.com"), "live", credentials("broken"));
    for (const name of ["a", "b"]) await storeCredentials(db, createCredentialCipher([oldKey]), await ensureShop(db, `script-${name}.myshopify.com`), "live", credentials(name));
    const token = `shpat_${randomBytes(16).toString("hex")}`;
    secrets.push(token);
    await db.session.create({ data: { id: offlineSessionId("script-a.myshopify.com"), shop: "script-a.myshopify.com", state: "", isOnline: false, accessToken: token } });

    const first = await runRotation(url, `${encoded(newKey)},${encoded(oldKey)}`);
    expect(first.code).toBe(1);
    expect(first.stdout).toContain(`Re-sealed with key "new": the credentials of 2 shop(s) and the Shopify tokens of 1 session(s).`);
    expect(first.stderr).toContain("script-broken.myshopify.com: live device-key, live secret-key");
    expect(first.stdout).toContain("Left on old keys: 1 shop(s), 0 session(s).");
    const output = first.stdout + first.stderr;
    for (const secret of [...secrets, encoded(newKey), encoded(oldKey)]) expect(output).not.toContain(secret);

    // The merchant of the broken shop connects the gateway again.
    await storeCredentials(db, createCredentialCipher([newKey]), broken, "live", credentials("reconnected"));
    await db.$disconnect();
    const second = await runRotation(url, `${encoded(newKey)},${encoded(oldKey)}`);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("Left on old keys: 0 shop(s), 0 session(s).");
    // Two runs of the script, each starting Node and compiling its modules.
  }, 90_000);
});
