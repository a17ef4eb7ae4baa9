// The start of every admin loader and action: who is asking (requireAdmin) and their
// shop's record, created on first use.
import type { AppServices } from "~/services.server";
import { requireAdmin, type AdminIdentity } from "~/shopify/admin-auth.server";
import { readinessHeldByShopify, readyToTakePayments } from "~/shops/gateway-directory.server";
import { ensureShop } from "~/shops/shop-credentials.server";
import type { Shop } from "../../generated/prisma/sqlite/client";

export interface AdminContext {
  identity: AdminIdentity;
  shop: Shop;
}

/** The answer to an admin request for a shop the app was uninstalled from. */
export const SHOP_UNINSTALLED_PAGE = "The app was uninstalled from this shop. Install it again from Shopify to use it.";

/**
 * The asking merchant's shop, as its row is now. A shop marked uninstalled is refused (409):
 * Shopify's reinstall records the install before this runs (afterAuth, recordInstall), so a row
 * still marked uninstalled here was uninstalled while this request was on its way, and nothing
 * in it may make the shop look installed again.
 */
export async function adminShop(request: Request, services: AppServices): Promise<AdminContext> {
  const identity = await requireAdmin(request, services);
  const shop = await ensureShop(services.db, identity.shopDomain);
  if (shop.uninstalledAt) {
    // With the development login there is no Shopify to install the app again: its log-in page stands for it.
    const page = identity.devLogin ? `${SHOP_UNINSTALLED_PAGE} In development, log in again at /auth/login?shop=${shop.shopDomain} to install it.` : SHOP_UNINSTALLED_PAGE;
    throw new Response(page, { status: 409, headers: { "content-type": "text/plain; charset=utf-8" } });
  }
  // A new install starts not ready in Shopify, while the row may still hold credentials that
  // can take payments (its uninstall was never carried out): whenever the row cannot vouch for
  // what Shopify holds (recordInstall), or holds another readiness than the credentials give,
  // the readiness pass is woken to tell Shopify now, not at its next round.
  if (!readinessHeldByShopify(shop, readyToTakePayments(services.gateways, shop))) services.notify?.readiness();
  return { identity, shop };
}
