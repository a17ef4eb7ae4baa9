// Who is using the merchant admin. Normally Shopify's embedded-app authentication (the
// session token App Bridge sends); in local development only, DEV_ADMIN_LOGIN lets the
// admin open in a plain browser for a *.myshopify.com shop named in the URL or a cookie,
// because App Bridge and Shopify's OAuth need Shopify's servers.
import { z } from "zod";
import type { AppServices } from "~/services.server";
import { authenticate } from "~/shopify.server";

export const DEV_SHOP_COOKIE = "cryptopay_dev_shop";
export const DEFAULT_DEV_SHOP = "demo-shop.myshopify.com";

export const shopDomainSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(255)
  .regex(/^[a-z0-9][a-z0-9-]*\.myshopify\.com$/, "must be a *.myshopify.com shop domain");

export interface AdminIdentity {
  shopDomain: string;
  devLogin: boolean;
}

export function devLoginEnabled(services: Pick<AppServices, "env">): boolean {
  // The environment module already refuses DEV_ADMIN_LOGIN in production; checked again
  // here because this is the one place it would open the admin without Shopify.
  return services.env.DEV_ADMIN_LOGIN && services.env.NODE_ENV !== "production";
}

function cookieValue(request: Request, name: string): string | null {
  const header = request.headers.get("cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) {
      try {
        return decodeURIComponent(rest.join("="));
      } catch {
        return null;
      }
    }
  }
  return null;
}

function badShop(message: string): Response {
  return new Response(message, { status: 400, headers: { "content-type": "text/plain; charset=utf-8" } });
}

/** The shop a development login is for: ?shop=, else the cookie, else the demo shop. */
export function devLoginShop(request: Request): string {
  const fromQuery = new URL(request.url).searchParams.get("shop");
  if (fromQuery !== null) {
    const parsed = shopDomainSchema.safeParse(fromQuery);
    if (!parsed.success) throw badShop("The shop parameter must be a *.myshopify.com domain.");
    return parsed.data;
  }
  const fromCookie = shopDomainSchema.safeParse(cookieValue(request, DEV_SHOP_COOKIE) ?? "");
  return fromCookie.success ? fromCookie.data : DEFAULT_DEV_SHOP;
}

/** Set-Cookie value remembering the development shop, so links without ?shop= stay on it. */
export function devShopCookie(shopDomain: string): string {
  return `${DEV_SHOP_COOKIE}=${encodeURIComponent(shopDomain)}; Path=/; HttpOnly; SameSite=Lax`;
}

/**
 * Every admin loader and action starts here. Throws the Response Shopify's
 * authentication answers with (redirects to OAuth, 401 for a bad session token).
 */
export async function requireAdmin(request: Request, services: AppServices): Promise<AdminIdentity> {
  if (devLoginEnabled(services)) return { shopDomain: devLoginShop(request), devLogin: true };
  const { session } = await authenticate.admin(request);
  return { shopDomain: session.shop, devLogin: false };
}
