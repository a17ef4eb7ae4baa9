import type { ActionFunctionArgs } from "@remix-run/node";
import { verifyShopifyWebhook } from "~/lib/shopify-webhook.server";
import { dataRequestPayloadSchema, recordCustomerDataRequest } from "~/shops/customer-data-requests.server";

export async function action({ request, context }: ActionFunctionArgs) {
  const { shop, payload, webhookId } = await verifyShopifyWebhook(request, context.services, "customers/data_request");
  const parsed = dataRequestPayloadSchema.safeParse(payload);
  if (!parsed.success) return new Response(null, { status: 400 });
  await recordCustomerDataRequest(context.services, { shopDomain: shop, webhookId, payload: parsed.data });
  return new Response(null, { status: 200 });
}
