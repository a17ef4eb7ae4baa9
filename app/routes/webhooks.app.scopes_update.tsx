import type { ActionFunctionArgs } from "@remix-run/node";
import { authenticate } from "~/shopify.server";

export async function action({ request, context }: ActionFunctionArgs) {
  const { shop, payload } = await authenticate.webhook(request);
  const current = (payload as { current?: unknown }).current;
  if (Array.isArray(current)) {
    await context.services.db.session.updateMany({ where: { shop }, data: { scope: current.map(String).join(",") } });
  }
  return new Response(null, { status: 200 });
}
