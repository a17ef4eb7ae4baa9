import type { ActionFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { authenticate } from "~/shopify.server";
import { handleAppUninstalled } from "~/shops/shopify-webhooks.server";

/** Shopify's X-Shopify-Triggered-At: when the uninstall happened (absent or unreadable: not known). */
const triggeredAtSchema = z.string().datetime({ offset: true }).transform((text) => new Date(text));

export async function action({ request, context }: ActionFunctionArgs) {
  const { shop, triggeredAt } = await authenticate.webhook(request);
  const when = triggeredAtSchema.safeParse(triggeredAt);
  await handleAppUninstalled(context.services, shop, when.success ? when.data : null);
  return new Response(null, { status: 200 });
}
