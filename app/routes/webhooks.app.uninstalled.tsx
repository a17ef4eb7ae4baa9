import type { ActionFunctionArgs } from "@remix-run/node";
import { authenticate } from "~/shopify.server";
import { handleAppUninstalled } from "~/shops/shopify-webhooks.server";

export async function action({ request, context }: ActionFunctionArgs) {
  const { shop } = await authenticate.webhook(request);
  await handleAppUninstalled(context.services, shop);
  return new Response(null, { status: 200 });
}
