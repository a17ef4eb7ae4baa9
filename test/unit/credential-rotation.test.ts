// Re-sealing stored credentials with a new key while the shops keep changing, on SQLite and
// PostgreSQL: a removal, an uninstall or a replacement made between the rotation's read and
// its write stays as it was made, and everything else ends up under the new key.
import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../app/db/database.server";
import { createLogger } from "../../app/lib/logger.server";
import { createCredentialCipher, type CredentialCipher } from "../../app/shops/credential-cipher.server";
import { clearCredentials, credentialContext, ensureShop, rotateCredentialEncryption, shopsOnOldKeys, storeCredentials } from "../../app/shops/shop-credentials.server";
import { handleAppUninstalled } from "../../app/shops/shopify-webhooks.server";
import type { Shop } from "../../generated/prisma/sqlite/client";
import { ROW_DATABASES, rowsDatabaseForFile } from "../support/row-databases";

const key = (id: string) => ({ id, key: new Uint8Array(randomBytes(32)) });
const SEALED = ["liveDeviceKeyEnc", "liveSecretKeyEnc", "sandboxDeviceKeyEnc", "sandboxSecretKeyEnc"] as const;

/** The client, with `afterRead` run after each read of shops returns and before the caller sees the rows. */
function withChangesAfterReads(db: Database, afterRead: () => Promise<void>): Database {
  const reads = new Set<PropertyKey>(["findMany", "findUnique", "findUniqueOrThrow", "findFirst", "findFirstOrThrow"]);
  const shop = new Proxy(db.shop, {
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
      if (name === "shop") return shop;
      const value: unknown = Reflect.get(target, name);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

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
      await clearCredentials(db, removedLive, "live");
      await handleAppUninstalled({ db, logger: createLogger({ level: "silent" }), clock: { now: () => new Date() } }, uninstalled.shopDomain);
      await storeCredentials(db, newCipher, replaced, "live", replacement);
      await storeCredentials(db, acceptingCipher, replacedOnOldKey, "live", replacementOnOldKey);
    });
    // The quiet shop, the sandbox kept beside the removal, and the device saved with the old key.
    expect(await rotateCredentialEncryption(racing, newCipher)).toBe(3);
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
    expect(await rotateCredentialEncryption(db, newCipher)).toBe(0);
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

    expect(await rotateCredentialEncryption(racing, newCipher)).toBe(1);
    expect(changes).toBeGreaterThan(1);
    const afterRace = await stored(restless);
    expect(acceptingCipher.decrypt(afterRace.liveDeviceKeyEnc!, credentialContext(restless.id, "live", "device-key"))).toBe(latest.deviceKey);
    expect(afterRace.liveDeviceKeyEnc!.split(":")[1]).toBe("old");
    expect(opened(await stored(calm), "live")).toEqual(calmCredentials);
    expect(await shopsOnOldKeys(db, newCipher)).toBe(1);

    // Once the shop is quiet again, the next run finishes it.
    expect(await rotateCredentialEncryption(db, newCipher)).toBe(1);
    expect(opened(await stored(restless), "live")).toEqual(latest);
    expect(await shopsOnOldKeys(db, newCipher)).toBe(0);
  });
});
