import type { ActionFunctionArgs } from "@remix-run/node";
import { verifyShopifyWebhook } from "~/lib/shopify-webhook.server";

export async function action({ request, context }: ActionFunctionArgs) {
  const { shop, payload } = await verifyShopifyWebhook(request, context.services, "app/scopes_update");
  const current = (payload as { current?: unknown } | null)?.current;
  if (Array.isArray(current)) {
    await context.services.db.session.updateMany({ where: { shop }, data: { scope: current.map(String).join(",") } });
  }
  return new Response(null, { status: 200 });
}
