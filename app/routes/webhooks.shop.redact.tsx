import type { ActionFunctionArgs } from "@remix-run/node";
import { shopRedactBody } from "~/lib/shopify-webhook-bodies";
import { verifyShopifyWebhook } from "~/lib/shopify-webhook.server";
import { redactShop } from "~/shops/shopify-webhooks.server";

export async function action({ request, context }: ActionFunctionArgs) {
  const { shop, triggeredAt } = await verifyShopifyWebhook(request, context.services, "shop/redact", shopRedactBody);
  // Unconfirmed: Shopify could not be asked whether the app is still installed; it delivers again.
  const outcome = await redactShop(context.services, shop, triggeredAt);
  return new Response(null, { status: outcome === "unconfirmed" ? 503 : 200 });
}
