// Liveness and readiness for load balancers: the process answers and the database responds.
import type { LoaderFunctionArgs } from "@remix-run/node";
import { jsonResponse } from "~/lib/http.server";

export async function loader({ context }: LoaderFunctionArgs) {
  try {
    await context.services.db.shop.count();
    return jsonResponse(200, { status: "ok" });
  } catch {
    return jsonResponse(503, { status: "database_unavailable" });
  }
}
