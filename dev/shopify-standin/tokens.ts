// The shop's offline access tokens, as Shopify keeps them for one app: the fixed token the
// stand-in starts with (a non-expiring offline token), and expiring offline tokens with
// their refresh tokens. An expiring token is refused once its hour is over, and the token
// endpoint (POST /admin/oauth/access_token, grant_type=refresh_token) answers a refresh
// the way Shopify does. It is stricter than Shopify in one way: a refresh token works
// once, so an app that refreshes twice for one expiry (two workers racing) is caught.

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";

const HOUR_SECONDS = 60 * 60;
const NINETY_DAYS_SECONDS = 90 * 24 * HOUR_SECONDS;

export interface TokenLifetimes {
  /** Shopify's expiring offline tokens last an hour. */
  accessTokenSeconds?: number;
  /** And their refresh tokens 90 days. */
  refreshTokenSeconds?: number;
}

export interface IssuedToken {
  accessToken: string;
  refreshToken: string;
  scope: string;
  expiresAt: string;
  refreshTokenExpiresAt: string;
}

/** One request to the token endpoint, as tests read it. */
export interface TokenGrantRecord {
  seq: number;
  at: string;
  shopDomain: string;
  grantType: string | null;
  status: number;
  /** The OAuth error code when refused (invalid_grant, invalid_client...). */
  error: string | null;
  /** The pair handed out when the grant succeeded. */
  issued: IssuedToken | null;
}

export interface TokenAnswer {
  status: number;
  body: unknown;
}

interface OfflineToken {
  accessToken: string;
  refreshToken: string | null;
  scope: string;
  /** Null for the non-expiring token. */
  expiresAt: Date | null;
  refreshTokenExpiresAt: Date | null;
  /** The app the token was issued to; null for the fixed token (issued before the stand-in started). */
  client: { id: string; secret: string } | null;
  revoked: boolean;
  refreshTokenUsed: boolean;
}

const grantSchema = z.object({
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
  grant_type: z.string().min(1),
  refresh_token: z.string().min(1).optional(),
});

export class OfflineTokens {
  private readonly tokens: OfflineToken[] = [];
  private readonly grants: TokenGrantRecord[] = [];
  private readonly accessSeconds: number;
  private readonly refreshSeconds: number;

  constructor(
    private readonly shopDomain: string,
    fixedToken: string,
    private readonly scope: string,
    private readonly now: () => Date,
    lifetimes: TokenLifetimes = {},
  ) {
    this.accessSeconds = lifetimes.accessTokenSeconds ?? HOUR_SECONDS;
    this.refreshSeconds = lifetimes.refreshTokenSeconds ?? NINETY_DAYS_SECONDS;
    this.addFixed(fixedToken);
  }

  /** A non-expiring offline token (what the app's install gives it outside token exchange). */
  private addFixed(accessToken: string): void {
    this.tokens.push({ accessToken, refreshToken: null, scope: this.scope, expiresAt: null, refreshTokenExpiresAt: null, client: null, revoked: false, refreshTokenUsed: false });
  }

  /** Whether Shopify would take this access token now: unknown, revoked and expired tokens are all refused. */
  accepts(given: string | undefined): boolean {
    return this.scopesOf(given) !== null;
  }

  /** The scopes an access token Shopify would take now carries; null for a token it refuses. */
  scopesOf(given: string | undefined): string[] | null {
    if (!given) return null;
    const token = this.tokens.find((t) => sameSecret(t.accessToken, given));
    if (!token || token.revoked) return null;
    if (token.expiresAt !== null && this.now().getTime() >= token.expiresAt.getTime()) return null;
    return token.scope.split(",").map((s) => s.trim()).filter(Boolean);
  }

  /**
   * An expiring offline token for the app with these credentials (what token exchange with
   * expiring=1 gives). Shopify keeps one offline token per app and shop: every earlier token,
   * the fixed one included, stops working.
   */
  issueExpiring(client: { clientId: string; clientSecret: string }): IssuedToken {
    this.revokeAll();
    return this.issue({ id: client.clientId, secret: client.clientSecret });
  }

  /**
   * The merchant uninstalls the app: Shopify revokes every token issued to it, so the GraphQL
   * endpoint refuses them (401) and the token endpoint their refresh tokens (invalid_grant).
   */
  revokeAll(): void {
    for (const token of this.tokens) token.revoked = true;
  }

  /** The merchant installs the app again: a new non-expiring offline token (every earlier one stays revoked). */
  issueFixed(): string {
    this.revokeAll();
    const accessToken = `shpat_${randomBytes(16).toString("hex")}`;
    this.addFixed(accessToken);
    return accessToken;
  }

  /** The hour is over: every expiring access token issued so far expires now (their refresh tokens still work). */
  expireAccessTokens(): void {
    const now = this.now();
    for (const token of this.tokens) if (token.expiresAt !== null) token.expiresAt = now;
  }

  grantRecords(): TokenGrantRecord[] {
    return this.grants;
  }

  /** POST /admin/oauth/access_token: the refresh grant, in Shopify's answers. */
  answerGrant(contentType: string | undefined, rawBody: string): TokenAnswer {
    const parsed = grantSchema.safeParse(parseGrantBody(contentType, rawBody));
    if (!parsed.success) {
      return this.record(null, 400, oauthError("invalid_request", "The request is missing a required parameter."));
    }
    const grant = parsed.data;
    if (grant.grant_type !== "refresh_token") {
      // The stand-in plays an installed app: token exchange and the authorization code grant belong to the admin, not here.
      return this.record(grant.grant_type, 400, oauthError("unsupported_grant_type", "The authorization grant type is not supported by the authorization server."));
    }
    const now = this.now().getTime();
    const token = grant.refresh_token === undefined ? undefined : this.tokens.find((t) => t.refreshToken !== null && sameSecret(t.refreshToken, grant.refresh_token!));
    if (!token?.client) return this.record(grant.grant_type, 400, oauthError("invalid_grant", "Token has been expired or revoked."));
    if (!sameSecret(token.client.id, grant.client_id) || !sameSecret(token.client.secret, grant.client_secret)) {
      return this.record(grant.grant_type, 401, oauthError("invalid_client", "Client authentication failed."));
    }
    if (token.revoked || token.refreshTokenUsed || (token.refreshTokenExpiresAt && now >= token.refreshTokenExpiresAt.getTime())) {
      return this.record(grant.grant_type, 400, oauthError("invalid_grant", "Token has been expired or revoked."));
    }
    token.refreshTokenUsed = true;
    this.revokeAll();
    const issued = this.issue(token.client);
    return this.record(grant.grant_type, 200, {
      access_token: issued.accessToken,
      scope: issued.scope,
      expires_in: this.accessSeconds,
      refresh_token: issued.refreshToken,
      refresh_token_expires_in: this.refreshSeconds,
    }, issued);
  }

  private issue(client: { id: string; secret: string }): IssuedToken {
    const now = this.now().getTime();
    const token: OfflineToken = {
      accessToken: `shpat_${randomBytes(16).toString("hex")}`,
      refreshToken: `shprt_${randomBytes(24).toString("hex")}`,
      scope: this.scope,
      expiresAt: new Date(now + this.accessSeconds * 1000),
      refreshTokenExpiresAt: new Date(now + this.refreshSeconds * 1000),
      client,
      revoked: false,
      refreshTokenUsed: false,
    };
    this.tokens.push(token);
    return {
      accessToken: token.accessToken,
      refreshToken: token.refreshToken!,
      scope: token.scope,
      expiresAt: token.expiresAt!.toISOString(),
      refreshTokenExpiresAt: token.refreshTokenExpiresAt!.toISOString(),
    };
  }

  private record(grantType: string | null, status: number, body: Record<string, unknown>, issued: IssuedToken | null = null): TokenAnswer {
    this.grants.push({
      seq: this.grants.length + 1,
      at: this.now().toISOString(),
      shopDomain: this.shopDomain,
      grantType,
      status,
      error: typeof body.error === "string" ? body.error : null,
      issued,
    });
    return { status, body };
  }
}

function oauthError(error: string, description: string): Record<string, unknown> {
  return { error, error_description: description };
}

// The library sends JSON; Shopify's endpoint also takes a form, as OAuth clients often send.
function parseGrantBody(contentType: string | undefined, rawBody: string): unknown {
  if (contentType?.startsWith("application/x-www-form-urlencoded")) return Object.fromEntries(new URLSearchParams(rawBody));
  try {
    return JSON.parse(rawBody);
  } catch {
    return undefined;
  }
}

function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}
