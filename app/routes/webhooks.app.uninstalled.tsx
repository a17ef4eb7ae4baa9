import type { ActionFunctionArgs } from "@remix-run/node";
import { appUninstalledBody } from "~/lib/shopify-webhook-bodies";
import { verifyShopifyWebhook } from "~/lib/shopify-webhook.server";
import { handleAppUninstalled } from "~/shops/shopify-webhooks.server";

export async function action({ request, context }: ActionFunctionArgs) {
  const { shop, triggeredAt } = await verifyShopifyWebhook(request, context.services, "app/uninstalled", appUninstalledBody);
  // Unconfirmed: Shopify could not be asked whether the app is still installed; it delivers again.
  const outcome = await handleAppUninstalled(context.services, shop, triggeredAt);
  return new Response(null, { status: outcome === "unconfirmed" ? 503 : 200 });
}
