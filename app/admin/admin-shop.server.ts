// The start of every admin loader and action: who is asking (requireAdmin) and their
// shop's record, created on first use.
import type { AppServices } from "~/services.server";
import { requireAdmin, type AdminIdentity } from "~/shopify/admin-auth.server";
import { readyToTakePayments } from "~/shops/gateway-directory.server";
import { ensureShop } from "~/shops/shop-credentials.server";
import type { Shop } from "../../generated/prisma/sqlite/client";

export interface AdminContext {
  identity: AdminIdentity;
  shop: Shop;
}

export async function adminShop(request: Request, services: AppServices): Promise<AdminContext> {
  const identity = await requireAdmin(request, services);
  const shop = await ensureShop(services.db, identity.shopDomain);
  // A new install starts not ready in Shopify (recordInstall), while the row may still hold
  // credentials that can take payments (its uninstall was never carried out): the readiness
  // pass is woken to tell Shopify now, not at its next round. Once it did, the row says ready.
  if (!shop.uninstalledAt && !shop.paymentsAppReady && readyToTakePayments(services.gateways, shop)) services.notify?.readiness();
  return { identity, shop };
}
