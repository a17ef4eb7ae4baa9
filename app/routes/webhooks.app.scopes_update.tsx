import type { ActionFunctionArgs } from "@remix-run/node";
import { scopesUpdateBody } from "~/lib/shopify-webhook-bodies";
import { verifyShopifyWebhook } from "~/lib/shopify-webhook.server";

// A list of scopes that is not Shopify's names is refused (400), and the stored scopes are left as they were.
// Shopify does not promise to deliver these in order, and an older one may overwrite a newer
// list. Nothing decides on the stored list: the embedded auth strategy (token exchange) does
// not compare scopes, and the app's payment scopes come with its payments extension.
export async function action({ request, context }: ActionFunctionArgs) {
  const { shop, payload } = await verifyShopifyWebhook(request, context.services, "app/scopes_update", scopesUpdateBody);
  await context.services.db.session.updateMany({ where: { shop }, data: { scope: payload.current.join(",") } });
  return new Response(null, { status: 200 });
}
