// The Payments Apps GraphQL endpoint: checks the access token, parses the request,
// validates the operation against the real schema (answering an invalid one the way
// Shopify does: HTTP 200 with top-level errors), executes it against the store and
// records every request with its variables, validation result and answer.

import {
  execute,
  getOperationAST,
  GraphQLError,
  Kind,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type ValidationRule,
} from "graphql";
import { z } from "zod";
import type { StandinStore } from "./store";
import { REQUEST_COST, STANDARD_COST_LIMIT, type ThrottleStatus } from "./cost-bucket";

export interface GraphqlAnswer {
  status: number;
  body: unknown;
}

export interface GraphqlRequest {
  shopDomain: string;
  apiVersion: string;
  accessToken: string | undefined;
  contentType: string | undefined;
  rawBody: string;
}

const requestSchema = z.object({
  query: z.string().min(1),
  variables: z.record(z.unknown()).nullish(),
  operationName: z.string().nullish(),
});

// graphql-ruby's codes for the validation failures an app is most likely to make,
// so an invalid operation is reported in the words Shopify uses.
const RULE_CODES: Record<string, string> = {
  FieldsOnCorrectTypeRule: "undefinedField",
  KnownArgumentNamesRule: "argumentNotAccepted",
  ProvidedRequiredArgumentsRule: "missingRequiredArguments",
  ScalarLeafsRule: "selectionMismatch",
  KnownTypeNamesRule: "undefinedType",
  VariablesInAllowedPositionRule: "variableMismatch",
  NoUndefinedVariablesRule: "variableNotDefined",
  NoUnusedVariablesRule: "variableNotUsed",
  ValuesOfCorrectTypeRule: "argumentLiteralsIncompatible",
  PossibleFragmentSpreadsRule: "cannotSpreadFragment",
  OverlappingFieldsCanBeMergedRule: "fieldConflict",
  UniqueArgumentNamesRule: "argumentNotUnique",
  KnownDirectivesRule: "undefinedDirective",
  KnownFragmentNamesRule: "undefinedFragment",
  NoUnusedFragmentsRule: "useAndDefineFragment",
  LoneAnonymousOperationRule: "anonymousOperationMustBeAlone",
  UniqueOperationNamesRule: "operationNotUnique",
  VariablesAreInputTypesRule: "variableRequiresValidType",
};

export const INVALID_TOKEN_MESSAGE = "[API] Invalid API key or access token (unrecognized login or wrong password)";

export function answerGraphql(
  request: GraphqlRequest,
  context: {
    store: StandinStore;
    schema: GraphQLSchema;
    rootValue: Record<string, unknown>;
    acceptsToken: (token: string | undefined) => boolean;
    /** The scopes the token was granted; when given, a root field whose scope is missing is refused (403) as Shopify does. */
    tokenScopes?: (token: string | undefined) => string[] | null;
    now: () => Date;
    /** The shop's cost bucket after paying for this request (the cost limit's), for the answer's cost block. */
    throttleStatus?: ThrottleStatus;
  },
): GraphqlAnswer {
  const { store } = context;
  const base = {
    at: context.now().toISOString(),
    shopDomain: request.shopDomain,
    apiVersion: request.apiVersion,
    fault: null,
  };

  let query: string | null = null;
  let variables: Record<string, unknown> = {};
  let operationName: string | null = null;
  const parsedBody = parseBody(request);
  if (parsedBody.ok) ({ query, variables, operationName } = parsedBody);

  const finish = (answer: GraphqlAnswer, validation: { valid: boolean; errors: unknown[] } | null): GraphqlAnswer => {
    store.record({
      ...base,
      operationName: operationName ?? (query ? firstOperationName(query) : null),
      query,
      variables,
      validation,
      status: answer.status,
      answer: answer.body,
      sessionIds: sessionIdsIn(variables, query),
    });
    return answer;
  };

  // Shopify answers an expired or revoked token like an unknown one.
  if (!context.acceptsToken(request.accessToken)) {
    return finish({ status: 401, body: { errors: INVALID_TOKEN_MESSAGE } }, null);
  }
  if (!parsedBody.ok || query === null) {
    return finish({ status: 400, body: { errors: { query: "Required parameter missing or invalid" } } }, null);
  }

  const checked = checkDocument(context.schema, query);
  if (!checked.ok) return finish({ status: 200, body: { errors: checked.errors } }, { valid: false, errors: checked.errors });
  const { document } = checked;

  // Shopify refuses a call whose token lacks a root field's access scope before running any of it.
  const missing = missingScope(document, operationName, context.tokenScopes?.(request.accessToken) ?? null);
  if (missing) {
    return finish({ status: 403, body: { errors: `[API] This action requires merchant approval for ${missing} scope.` } }, { valid: true, errors: [] });
  }

  const result = execute({
    schema: context.schema,
    document,
    rootValue: context.rootValue,
    variableValues: variables,
    operationName,
  });
  if (isPromiseLike(result)) throw new Error("The stand-in's resolvers are synchronous");

  // No `data` at all means the request failed before execution: bad variables or a
  // missing operation name. Shopify answers those like validation errors.
  if (!("data" in result) || result.data === undefined) {
    const errors = (result.errors ?? []).map((e) => formatError(e, "INVALID_VARIABLE"));
    return finish({ status: 200, body: { errors } }, { valid: false, errors });
  }
  const body: Record<string, unknown> = { data: result.data };
  if (result.errors?.length) body.errors = result.errors.map((e) => formatError(e, "INTERNAL_SERVER_ERROR"));
  body.extensions = { cost: costExtension(context.throttleStatus) };
  return finish({ status: 200, body }, { valid: true, errors: [] });
}

/** The access scope each root field requires (shopify.dev, Payments Apps API reference); absent: none. */
const FIELD_SCOPES: Record<string, string> = {
  paymentsAppConfigure: "write_payment_gateways",
};
const SESSION_SCOPE = "write_payment_sessions";

function missingScope(document: DocumentNode, operationName: string | null, granted: string[] | null): string | null {
  if (granted === null) return null;
  const operation = getOperationAST(document, operationName);
  if (!operation || operation.operation !== "mutation") return null;
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD || selection.name.value.startsWith("__")) continue;
    const needed = FIELD_SCOPES[selection.name.value] ?? SESSION_SCOPE;
    if (!granted.includes(needed)) return needed;
  }
  return null;
}

function parseBody(
  request: GraphqlRequest,
): { ok: true; query: string; variables: Record<string, unknown>; operationName: string | null } | { ok: false } {
  if (request.contentType?.startsWith("application/graphql")) {
    return request.rawBody.trim() ? { ok: true, query: request.rawBody, variables: {}, operationName: null } : { ok: false };
  }
  // Shopify reads a body as JSON only when it is sent as JSON.
  if (!request.contentType?.startsWith("application/json")) return { ok: false };
  let json: unknown;
  try {
    json = JSON.parse(request.rawBody);
  } catch {
    return { ok: false };
  }
  const parsed = requestSchema.safeParse(json);
  if (!parsed.success) return { ok: false };
  return { ok: true, query: parsed.data.query, variables: parsed.data.variables ?? {}, operationName: parsed.data.operationName ?? null };
}

type CheckedDocument = { ok: true; document: DocumentNode } | { ok: false; errors: ReturnType<typeof formatError>[] };

/**
 * Parse and validation depend on the schema and the query text alone, and an app sends the
 * same few documents with different variables: each distinct text is checked once (up to
 * DOCUMENTS_KEPT per schema). Variables are still coerced against the schema on every call.
 */
const DOCUMENTS_KEPT = 200;
const checkedDocuments = new WeakMap<GraphQLSchema, Map<string, CheckedDocument>>();

function checkDocument(schema: GraphQLSchema, query: string): CheckedDocument {
  let kept = checkedDocuments.get(schema);
  if (!kept) checkedDocuments.set(schema, (kept = new Map()));
  const known = kept.get(query);
  if (known) return known;
  const checked = parseAndValidate(schema, query);
  if (kept.size >= DOCUMENTS_KEPT) kept.delete(kept.keys().next().value!);
  kept.set(query, checked);
  return checked;
}

function parseAndValidate(schema: GraphQLSchema, query: string): CheckedDocument {
  let document: DocumentNode;
  try {
    document = parse(query);
  } catch (error) {
    return { ok: false, errors: [formatError(error instanceof GraphQLError ? error : new GraphQLError(String(error)), "parseError")] };
  }
  const errors = validateLikeShopify(schema, document);
  return errors.length > 0 ? { ok: false, errors } : { ok: true, document };
}

function validateLikeShopify(schema: GraphQLSchema, document: DocumentNode) {
  return specifiedRules.flatMap((rule: ValidationRule) =>
    validate(schema, document, [rule]).map((error) => formatError(error, RULE_CODES[rule.name] ?? rule.name.replace(/Rule$/, ""))),
  );
}

function formatError(error: GraphQLError, code: string) {
  const json = error.toJSON();
  return { ...json, extensions: { code, ...(json.extensions ?? {}) } };
}

function firstOperationName(query: string): string | null {
  return /\b(?:mutation|query)\s+([_A-Za-z][_0-9A-Za-z]*)/.exec(query)?.[1] ?? null;
}

function sessionIdsIn(variables: unknown, query: string | null): string[] {
  const found = new Set<string>();
  const walk = (value: unknown): void => {
    if (typeof value === "string" && value.startsWith("gid://shopify/")) found.add(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === "object") Object.values(value).forEach(walk);
  };
  walk(variables);
  for (const match of query?.matchAll(/gid:\/\/shopify\/[A-Za-z]+\/[A-Za-z0-9_-]+/g) ?? []) found.add(match[0]);
  return [...found];
}

// The answer's cost block, as clients (and the app's throttle handling) read it: the bucket as
// the cost limit left it, or a plausible one when the stand-in keeps none.
function costExtension(throttleStatus: ThrottleStatus = { ...STANDARD_COST_LIMIT, currentlyAvailable: STANDARD_COST_LIMIT.maximumAvailable - REQUEST_COST }) {
  return {
    requestedQueryCost: REQUEST_COST,
    actualQueryCost: REQUEST_COST,
    throttleStatus,
  };
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
