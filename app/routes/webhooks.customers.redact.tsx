import type { ActionFunctionArgs } from "@remix-run/node";
import { customersRedactBody } from "~/lib/shopify-webhook-bodies";
import { verifyShopifyWebhook } from "~/lib/shopify-webhook.server";
import { redactCustomer } from "~/shops/shopify-webhooks.server";

export async function action({ request, context }: ActionFunctionArgs) {
  const { shop, payload } = await verifyShopifyWebhook(request, context.services, "customers/redact", customersRedactBody);
  await redactCustomer(context.services, shop, payload.customer);
  return new Response(null, { status: 200 });
}
