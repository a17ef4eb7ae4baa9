// Shopify's capture session request: 201 at once, finished later through the outbox.
import type { ActionFunctionArgs } from "@remix-run/node";
import { methodNotAllowed } from "~/lib/http.server";
import { followUpAction } from "~/payments/follow-up-route.server";

export const action = ({ request, context }: ActionFunctionArgs) => followUpAction("capture", request, context.services);

export function loader() {
  return methodNotAllowed("POST");
}
