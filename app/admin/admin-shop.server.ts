// The start of every admin loader and action: who is asking (requireAdmin) and their
// shop's record, created on first use.
import type { AppServices } from "~/services.server";
import { requireAdmin, type AdminIdentity } from "~/shopify/admin-auth.server";
import { ensureShop } from "~/shops/shop-credentials.server";
import type { Shop } from "../../generated/prisma/sqlite/client";

export interface AdminContext {
  identity: AdminIdentity;
  shop: Shop;
}

export async function adminShop(request: Request, services: AppServices): Promise<AdminContext> {
  const identity = await requireAdmin(request, services);
  const shop = await ensureShop(services.db, identity.shopDomain);
  return { identity, shop };
}
