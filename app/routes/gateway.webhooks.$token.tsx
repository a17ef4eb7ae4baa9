// The per-shop gateway notification URL. Verified on the raw bytes, stored, answered fast.
import type { ActionFunctionArgs } from "@remix-run/node";
import { jsonResponse, methodNotAllowed, readBody } from "~/lib/http.server";
import { receiveGatewayWebhook } from "~/payments/gateway-webhooks";

export async function action({ request, params, context }: ActionFunctionArgs) {
  if (request.method !== "POST") return methodNotAllowed("POST");
  const body = await readBody(request, 32 * 1024);
  if (!body.ok) return body.response;
  const result = await receiveGatewayWebhook(context.services, {
    token: params.token ?? "",
    rawBody: body.bytes,
    nonce: request.headers.get("x-nonce"),
    signature: request.headers.get("x-signature"),
    maxNonceAgeSeconds: context.services.env.WEBHOOK_MAX_NONCE_AGE_SECONDS,
  });
  return result.status === 200 ? jsonResponse(200, { received: true }) : jsonResponse(result.status, { error: result.reason });
}

export function loader() {
  return methodNotAllowed("POST");
}
