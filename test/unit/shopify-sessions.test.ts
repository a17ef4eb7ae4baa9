// Shopify's sessions at rest, on SQLite and PostgreSQL: the offline access token and its
// refresh token are stored sealed, bound to their session, and come back as they were; a token
// stored in clear by an earlier release is still read and sealed when the session is stored
// next; a token no configured key opens is left out rather than used, and no token is logged.
import { randomBytes } from "node:crypto";
import { Session } from "@shopify/shopify-api";
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../app/db/database.server";
import { createLogger } from "../../app/lib/logger.server";
import { createCredentialCipher } from "../../app/shops/credential-cipher.server";
import { offlineSessionId } from "../../app/shops/shopify-directory.server";
import { createSealedSessionStorage } from "../../app/shops/shopify-sessions.server";
import { ROW_DATABASES, rowsDatabaseForFile } from "../support/row-databases";

const key = (id: string) => ({ id, key: new Uint8Array(randomBytes(32)) });
const cipher = createCredentialCipher([key("current")]);

let serial = 0;
function offlineSession(): Session {
  const shop = `sessions-${++serial}.myshopify.com`;
  const session = new Session({
    id: offlineSessionId(shop),
    shop,
    state: "installed",
    isOnline: false,
    scope: "write_payment_gateways,write_payment_sessions",
    accessToken: `shpat_${randomBytes(16).toString("hex")}`,
    expires: new Date(Date.now() + 3_600_000),
  });
  session.refreshToken = `shprt_${randomBytes(16).toString("hex")}`;
  session.refreshTokenExpires = new Date(Date.now() + 30 * 86_400_000);
  return session;
}

describe.each(ROW_DATABASES)("on $name", (database) => {
  let db: Database;
  const rows = rowsDatabaseForFile(database, { shopDomain: "sessions.myshopify.com", webhookToken: "sessions-webhook-token-01" });
  beforeAll(() => void ({ db } = rows()));

  const raw = (id: string) => db.session.findUniqueOrThrow({ where: { id } });

  it("stores the access token and the refresh token sealed, and loads them back as they were", async () => {
    const storage = createSealedSessionStorage(db, cipher);
    const session = offlineSession();
    expect(await storage.storeSession(session)).toBe(true);

    const stored = await raw(session.id);
    expect(stored.accessToken).not.toContain(session.accessToken);
    expect(stored.refreshToken).not.toContain(session.refreshToken);
    // The session handed in is left as it was: the library and the directory go on using it.
    expect(session.accessToken).toMatch(/^shpat_/);

    const loaded = await storage.loadSession(session.id);
    expect(loaded?.toObject()).toEqual(session.toObject());
    expect((await storage.findSessionsByShop(session.shop)).map((s) => s.accessToken)).toEqual([session.accessToken]);
  });

  it("binds each token to its session: a sealed token copied to another session's row does not open", async () => {
    const storage = createSealedSessionStorage(db, cipher);
    const victim = offlineSession();
    const other = offlineSession();
    await storage.storeSession(victim);
    await storage.storeSession(other);
    const sealed = await raw(victim.id);
    await db.session.update({ where: { id: other.id }, data: { accessToken: sealed.accessToken, refreshToken: sealed.refreshToken } });

    const loaded = await storage.loadSession(other.id);
    expect(loaded?.accessToken).toBeUndefined();
    expect(loaded?.refreshToken).toBeUndefined();
    expect(loaded?.isActive(undefined)).toBe(false);
  });

  it("reads a token stored in clear, and seals it when the session is stored again", async () => {
    const storage = createSealedSessionStorage(db, cipher);
    const session = offlineSession();
    // As an earlier release (or the library's own storage) wrote it.
    await db.session.create({
      data: { id: session.id, shop: session.shop, state: session.state, isOnline: false, scope: session.scope!, expires: session.expires!, accessToken: session.accessToken!, refreshToken: session.refreshToken! },
    });

    const loaded = await storage.loadSession(session.id);
    expect([loaded?.accessToken, loaded?.refreshToken]).toEqual([session.accessToken, session.refreshToken]);

    await storage.storeSession(loaded!);
    const stored = await raw(session.id);
    expect(stored.accessToken).not.toBe(session.accessToken);
    expect(stored.refreshToken).not.toBe(session.refreshToken);
    expect((await storage.loadSession(session.id))?.accessToken).toBe(session.accessToken);
  });

  it("leaves out a token no configured key opens, says so without the token, and scrubs loaded tokens from the log", async () => {
    const session = offlineSession();
    await createSealedSessionStorage(db, createCredentialCipher([key("removed")])).storeSession(session);
    const lines: string[] = [];
    const logger = createLogger({ sink: (line) => lines.push(line) });

    const loaded = await createSealedSessionStorage(db, cipher, logger).loadSession(session.id);
    // Without a token the library exchanges a new one the next time the merchant opens the app.
    expect(loaded?.accessToken).toBeUndefined();
    expect(loaded?.shop).toBe(session.shop);
    expect(lines.join("\n")).toContain(session.shop);
    expect(lines.join("\n")).toContain("cannot be opened");

    const readable = offlineSession();
    const storage = createSealedSessionStorage(db, cipher, logger);
    await storage.storeSession(readable);
    const opened = await storage.loadSession(readable.id);
    logger.error(`Shopify answered for ${opened!.accessToken} (refresh ${opened!.refreshToken})`);
    const text = lines.join("\n");
    for (const token of [session.accessToken!, session.refreshToken!, readable.accessToken!, readable.refreshToken!]) expect(text).not.toContain(token);
  });
});
