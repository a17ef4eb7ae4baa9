// The payment page's live status (JSON): read from the database, which notifications and
// the reconciler keep current; a gateway read happens only through refreshIfDue (at most
// once every 15 seconds per payment).
import type { LoaderFunctionArgs } from "@remix-run/node";
import { jsonResponse } from "~/lib/http.server";
import { destinationAfterUninstall, pageFacts, paymentForLink, paymentStatusView, refreshIfDue } from "~/payment-page/payment-page.server";

export async function loader({ request, params, context }: LoaderFunctionArgs) {
  const { services } = context;
  const found = await paymentForLink(services, params, new URL(request.url));
  if (!found) return jsonResponse(404, { error: "not_found", message: "This payment link is not valid." });
  if (found.shop.uninstalledAt) {
    // A payment Shopify took the outcome of still goes on to Shopify; for any other, the page, told so, reloads into its "shop gone" answer.
    const onward = destinationAfterUninstall(services, found);
    if (!onward) return jsonResponse(410, { error: "shop_gone", message: "This shop no longer takes crypto payments through this app." });
    return jsonResponse(200, { ...paymentStatusView(services, found), redirectUrl: onward });
  }
  const payment = await refreshIfDue(services, found);
  const { held, left } = await pageFacts(services, payment);
  return jsonResponse(200, paymentStatusView(services, payment, held, left));
}
