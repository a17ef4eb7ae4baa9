// Liveness and readiness for load balancers: the process answers and the database responds,
// within HEALTH_CHECK_MS (a health check gives up after a few seconds: a database that does
// not answer is reported as unavailable in time, not by the checker's own timeout).
import type { LoaderFunctionArgs } from "@remix-run/node";
import { settledWithin } from "~/lib/deadline";
import { jsonResponse } from "~/lib/http.server";

const HEALTH_CHECK_MS = 2_000;

export async function loader({ context }: LoaderFunctionArgs) {
  try {
    const answered = await settledWithin(context.services.db.shop.count(), HEALTH_CHECK_MS);
    return answered ? jsonResponse(200, { status: "ok" }) : jsonResponse(503, { status: "database_unavailable", reason: "no answer in time" });
  } catch {
    return jsonResponse(503, { status: "database_unavailable" });
  }
}
