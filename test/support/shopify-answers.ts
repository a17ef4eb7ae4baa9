// Shopify answers a test chooses, behind the app's real Payments Apps client: the requests are
// the ones the app sends (the client's query, variables and headers), only the answers are
// the test's. Every request is first checked against the real Payments Apps schema, as the
// stand-in checks them: a query Shopify would refuse, or variables it would not coerce, get
// Shopify's answer to them (HTTP 200 with errors and no data) instead of the test's.
import { getOperationAST, getVariableValues, parse, validate, type GraphQLSchema } from "graphql";
import type { ShopifyDirectory } from "../../app/payments/deps";
import { createPaymentsAppsClient } from "../../app/shopify/payments-apps/client";
import { loadPaymentsAppsSchema } from "../shopify/payments-apps-schema";

/** One request the app sent Shopify. */
export interface ShopifyCall {
  shopDomain: string;
  /** The operation's name, e.g. PaymentSessionResolve. */
  operationName: string;
  variables: Record<string, unknown>;
}

let schema: GraphQLSchema | undefined;

/** The request as a call, or what Shopify would answer it when it refuses it. */
function checkedCall(shopDomain: string, body: string): ShopifyCall | { refused: string } {
  const request = JSON.parse(body) as { query: string; variables?: Record<string, unknown>; operationName?: string };
  schema ??= loadPaymentsAppsSchema();
  const document = parse(request.query);
  const invalid = validate(schema, document);
  if (invalid.length > 0) return { refused: invalid.map((error) => error.message).join("; ") };
  const operation = getOperationAST(document, request.operationName);
  if (!operation?.name) return { refused: "the query names no operation" };
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {});
  if (coerced.errors) return { refused: coerced.errors.map((error) => error.message).join("; ") };
  return { shopDomain, operationName: operation.name.value, variables: request.variables ?? {} };
}

/**
 * A Shopify directory giving every shop the real client over `answer`. `beforeClient` runs as
 * a shop's client is asked for (a token renewal taking time, say).
 */
export function shopifyAnswering(
  answer: (call: ShopifyCall) => Response | Promise<Response>,
  options: { accessToken?: string; beforeClient?: () => void } = {},
): ShopifyDirectory {
  return {
    forShop: async (shopDomain: string) => {
      options.beforeClient?.();
      return createPaymentsAppsClient({
        shopDomain,
        accessToken: options.accessToken ?? "shpat_chosen_answers",
        fetch: (async (_url: unknown, init?: RequestInit) => {
          const call = checkedCall(shopDomain, String(init?.body));
          return "refused" in call ? jsonAnswer({ errors: [{ message: call.refused }] }) : answer(call);
        }) as typeof fetch,
      });
    },
  };
}

/** A JSON answer, 200 unless told. */
export function jsonAnswer(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });
}

/** Shopify's answer to a payment session's resolve or reject that took it. */
export function sessionTaken(operationName: string, gid: string): Response {
  const rejected = operationName === "PaymentSessionReject";
  const state = rejected
    ? { __typename: "PaymentSessionStateRejected", code: "REJECTED", reason: "PROCESSING_ERROR", merchantMessage: null }
    : { __typename: "PaymentSessionStateResolved", code: "RESOLVED" };
  const field = operationName.charAt(0).toLowerCase() + operationName.slice(1);
  return jsonAnswer({ data: { [field]: { paymentSession: { id: gid, state, nextAction: null }, userErrors: [] } } });
}
