// Shopify's sessions (the shop's offline access token and its refresh token) at rest: the
// library's Prisma storage, with both tokens sealed by the credential cipher and bound to the
// session they belong to, so a token copied to another session's row does not open. A token
// stored in clear (before tokens were sealed) is still read, and sealed when the session is
// stored next or by `npm run credentials:rotate`. Every token read or stored is registered
// with the log scrubber.
import { Session } from "@shopify/shopify-api";
import { PrismaSessionStorage } from "@shopify/shopify-app-session-storage-prisma";
import type { Database } from "~/db/database.server";
import { registerSecret, silentLogger, type Logger } from "~/lib/logger.server";
import { isCredentialDecryptionError, isSealed, type CredentialCipher } from "./credential-cipher.server";

export type SessionToken = "access-token" | "refresh-token";

export function sessionTokenContext(sessionId: string, token: SessionToken): string {
  return `shopify-session:${sessionId}:${token}`;
}

/** What the app and the library need of a session storage (the library's SessionStorage interface). */
export interface ShopifySessionStorage {
  storeSession(session: Session): Promise<boolean>;
  loadSession(id: string): Promise<Session | undefined>;
  deleteSession(id: string): Promise<boolean>;
  deleteSessions(ids: string[]): Promise<boolean>;
  findSessionsByShop(shop: string): Promise<Session[]>;
}

/** Registers the session's tokens with the log scrubber (each renewal replacing the one before last), and hands the session back. */
export function rememberTokens(session: Session): Session {
  registerSecret(session.accessToken, `shopify-access-token:${session.shop}`);
  registerSecret(session.refreshToken, `shopify-refresh-token:${session.shop}`);
  return session;
}

/** A stored token as the app uses it: opened when sealed, as it is when stored in clear. Throws a CredentialDecryptionError. */
export function openSessionToken(cipher: CredentialCipher, sessionId: string, token: SessionToken, stored: string): string {
  return isSealed(stored) ? cipher.decrypt(stored, sessionTokenContext(sessionId, token)) : stored;
}

/**
 * The session storage of the app (app/shopify.server.ts) and of the outbox's Shopify directory,
 * on the app's database client. A token none of the configured keys opens is left out of the
 * session loaded (logged, without the token): Shopify's token exchange replaces it the next
 * time the merchant opens the app.
 */
export function createSealedSessionStorage(db: Database, cipher: CredentialCipher, logger: Logger = silentLogger): ShopifySessionStorage {
  // The generated client has the models the storage needs; its type comes from another path.
  const rows = new PrismaSessionStorage(db as never);

  function sealed(session: Session): Session {
    const { accessToken, refreshToken } = session;
    return new Session({
      ...session.toObject(),
      ...(accessToken ? { accessToken: cipher.encrypt(accessToken, sessionTokenContext(session.id, "access-token")) } : {}),
      ...(refreshToken ? { refreshToken: cipher.encrypt(refreshToken, sessionTokenContext(session.id, "refresh-token")) } : {}),
    });
  }

  function opened(session: Session): Session {
    const tokens: Partial<Record<"accessToken" | "refreshToken", string | undefined>> = {};
    for (const [field, token] of [["accessToken", "access-token"], ["refreshToken", "refresh-token"]] as const) {
      const stored = session[field];
      if (!stored) continue;
      try {
        tokens[field] = openSessionToken(cipher, session.id, token, stored);
      } catch (error) {
        if (!isCredentialDecryptionError(error)) throw error;
        tokens[field] = undefined;
        logger.warn("A stored Shopify token cannot be opened with the configured keys; the merchant's next visit to the app replaces it", {
          shop: session.shop,
          kind: token,
        });
      }
    }
    return rememberTokens(new Session({ ...session.toObject(), ...tokens }));
  }

  return {
    storeSession: (session) => rows.storeSession(sealed(rememberTokens(session))),
    loadSession: async (id) => {
      const session = await rows.loadSession(id);
      return session && opened(session);
    },
    deleteSession: (id) => rows.deleteSession(id),
    deleteSessions: (ids) => rows.deleteSessions(ids),
    findSessionsByShop: async (shop) => (await rows.findSessionsByShop(shop)).map(opened),
  };
}
