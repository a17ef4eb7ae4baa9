import type { ActionFunctionArgs } from "@remix-run/node";
import { z } from "zod";
import { verifyShopifyWebhook } from "~/lib/shopify-webhook.server";

// The scopes the merchant now grants, as Shopify names them ("write_payment_gateways"): a
// list of anything else is refused, and the stored scopes are left as they were.
const payloadSchema = z
  .object({
    current: z
      .array(
        z
          .string()
          .max(100)
          .regex(/^[a-z][a-z_]*$/),
      )
      .max(200),
  })
  .passthrough();

export async function action({ request, context }: ActionFunctionArgs) {
  const { shop, payload } = await verifyShopifyWebhook(request, context.services, "app/scopes_update");
  const parsed = payloadSchema.safeParse(payload);
  if (!parsed.success) return new Response(null, { status: 400 });
  await context.services.db.session.updateMany({ where: { shop }, data: { scope: parsed.data.current.join(",") } });
  return new Response(null, { status: 200 });
}
