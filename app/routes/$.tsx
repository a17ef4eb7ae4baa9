// Every address no other route serves (a mistyped link, a stale bookmark, the notification URL
// with something appended), in any method: a 404 of the app's own, shown by the root's error
// page and logged once by the app's logger. Served by a route rather than left unmatched, as
// the router writes an unmatched address, notification token and all, to the console
// whenever NODE_ENV is not "production".
import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { logPageRequestRefused } from "~/lib/page-requests.server";

function notFound({ request, context }: LoaderFunctionArgs | ActionFunctionArgs): never {
  logPageRequestRefused(context.services.logger, request, 404);
  throw new Response(null, { status: 404, statusText: "Not Found" });
}

export const loader = (args: LoaderFunctionArgs) => notFound(args);
export const action = (args: ActionFunctionArgs) => notFound(args);

/** Never shown: the loader and the action always answer 404, which the root's error page shows. */
export default function NotFound() {
  return null;
}
