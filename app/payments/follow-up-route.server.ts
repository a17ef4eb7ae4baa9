// The shared body of the refund, capture and void routes: validate, record, answer 201.
import type { AppServices } from "~/services.server";
import { errorResponse, jsonResponse, methodNotAllowed, readJsonBody, zodProblem } from "~/lib/http.server";
import { receiveFollowUpSession } from "./follow-up-sessions";
import { followUpSchemas, readShopifyHeaders, type FollowUpKind } from "./shopify-requests";

export async function followUpAction(kind: FollowUpKind, request: Request, services: AppServices): Promise<Response> {
  if (request.method !== "POST") return methodNotAllowed("POST");
  const headers = readShopifyHeaders(request.headers);
  if (!headers.success) return errorResponse(400, "invalid_headers", "Shopify's payment headers are missing or malformed.", zodProblem(headers.error));
  const body = await readJsonBody(request);
  if (!body.ok) return body.response;
  const parsed = followUpSchemas[kind].safeParse(body.value);
  if (!parsed.success) return errorResponse(400, `invalid_${kind}_session`, `The ${kind} session is malformed.`, zodProblem(parsed.error));
  const answer = await receiveFollowUpSession(services, { kind, shopDomain: headers.data["shopify-shop-domain"], request: parsed.data });
  return answer.status === 201 ? new Response(null, { status: 201 }) : jsonResponse(answer.status, answer.body);
}
