// The shop's payments as a CSV file (app/admin/payments-export.server.ts), with the list's
// filters from the query string. A resource route: the Payments page fetches it (so App
// Bridge adds the session token in the embedded admin) and saves the answer as a file. Never
// cached, as every admin page (server/page-headers.ts).
import type { LoaderFunctionArgs } from "@remix-run/node";
import { adminShop } from "~/admin/admin-shop.server";
import { parsePaymentFilters } from "~/admin/payment-filters";
import { exportFileName, paymentsCsv } from "~/admin/payments-export.server";

export async function loader({ request, context }: LoaderFunctionArgs) {
  const { shop } = await adminShop(request, context.services);
  const filters = parsePaymentFilters(new URL(request.url).searchParams);
  return new Response(paymentsCsv(context.services.db, shop.id, filters), {
    headers: {
      "content-type": "text/csv; charset=utf-8",
      "content-disposition": `attachment; filename="${exportFileName(shop.shopDomain, context.services.clock.now())}"`,
    },
  });
}
