import type { ActionFunctionArgs } from "@remix-run/node";
import { dataRequestBody } from "~/lib/shopify-webhook-bodies";
import { verifyShopifyWebhook } from "~/lib/shopify-webhook.server";
import { recordCustomerDataRequest } from "~/shops/customer-data-requests.server";

export async function action({ request, context }: ActionFunctionArgs) {
  const { shop, payload, webhookId } = await verifyShopifyWebhook(request, context.services, "customers/data_request", dataRequestBody);
  await recordCustomerDataRequest(context.services, { shopDomain: shop, webhookId, payload });
  return new Response(null, { status: 200 });
}
