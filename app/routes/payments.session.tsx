// Shopify's payment session request (offsite). mTLS is checked by the server entry.
import type { ActionFunctionArgs } from "@remix-run/node";
import { errorResponse, jsonResponse, methodNotAllowed, readJsonBody, zodProblem } from "~/lib/http.server";
import { paymentSessionRequestSchema, readShopifyHeaders } from "~/payments/shopify-requests";
import { startPaymentSession } from "~/payments/start-payment-session";

export async function action({ request, context }: ActionFunctionArgs) {
  if (request.method !== "POST") return methodNotAllowed("POST");
  const headers = readShopifyHeaders(request.headers);
  if (!headers.success) return errorResponse(400, "invalid_headers", "Shopify's payment headers are missing or malformed.", zodProblem(headers.error));
  const body = await readJsonBody(request);
  if (!body.ok) return body.response;
  const parsed = paymentSessionRequestSchema.safeParse(body.value);
  if (!parsed.success) return errorResponse(400, "invalid_payment_session", "The payment session is malformed.", zodProblem(parsed.error));
  const answer = await startPaymentSession(context.services, { shopDomain: headers.data["shopify-shop-domain"], request: parsed.data });
  return jsonResponse(answer.status, answer.body, answer.headers);
}

export function loader() {
  return methodNotAllowed("POST");
}
