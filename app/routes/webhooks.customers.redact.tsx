import type { ActionFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { verifyShopifyWebhook } from "~/lib/shopify-webhook.server";
import { redactCustomer } from "~/shops/shopify-webhooks.server";

const payloadSchema = z.object({ customer: z.object({ email: z.string().nullish(), phone: z.string().nullish() }).passthrough() }).passthrough();

export async function action({ request, context }: ActionFunctionArgs) {
  const { shop, payload } = await verifyShopifyWebhook(request, context.services, "customers/redact");
  const parsed = payloadSchema.safeParse(payload);
  if (!parsed.success) return new Response(null, { status: 400 });
  await redactCustomer(context.services, shop, parsed.data.customer);
  return new Response(null, { status: 200 });
}
