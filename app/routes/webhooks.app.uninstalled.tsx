import type { ActionFunctionArgs } from "@remix-run/node";
import { appUninstalledBody } from "~/lib/shopify-webhook-bodies";
import { verifyShopifyWebhook } from "~/lib/shopify-webhook.server";
import { handleAppUninstalled } from "~/shops/shopify-webhooks.server";

export async function action({ request, context }: ActionFunctionArgs) {
  const { shop, triggeredAt } = await verifyShopifyWebhook(request, context.services, "app/uninstalled", appUninstalledBody);
  // Carried out, ignored, or held until Shopify can say whether the app is still installed:
  // taken in every case (an error while storing it is a 5xx, and Shopify delivers it again).
  await handleAppUninstalled(context.services, shop, triggeredAt);
  return new Response(null, { status: 200 });
}
