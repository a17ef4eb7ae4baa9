// Shopify's OAuth and embedded-auth callbacks under /auth/*: the library answers them
// (redirects into the admin once the shop is installed).
import type { LoaderFunctionArgs } from "@remix-run/node";
import { authenticate } from "~/shopify.server";

export async function loader({ request }: LoaderFunctionArgs) {
  await authenticate.admin(request);
  return null;
}
