// The real Payments Apps 2026-04 schema, loaded once for validating and executing the
// operations the app sends. The file lives with the test fixtures so that the stand-in
// and the tests judge the app's documents against the very same schema.

import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import {
  buildClientSchema,
  GraphQLError,
  GraphQLScalarType,
  Kind,
  type GraphQLSchema,
  type IntrospectionQuery,
  type ValueNode,
} from "graphql";

export const STANDIN_API_VERSION = "2026-04";

const SCHEMA_FILE = fileURLToPath(new URL("../../test/fixtures/shopify/payments-apps_2026-04.json.gz", import.meta.url));

let cached: GraphQLSchema | undefined;

export function paymentsAppsSchema(): GraphQLSchema {
  if (!cached) {
    const json = JSON.parse(gunzipSync(readFileSync(SCHEMA_FILE)).toString("utf8")) as { data: IntrospectionQuery };
    cached = buildClientSchema(json.data);
    teachScalars(cached);
  }
  return cached;
}

// A client schema's custom scalars accept anything. Shopify rejects a malformed DateTime
// or URL while coercing variables, before any resolver runs; the stand-in does the same.
function teachScalars(schema: GraphQLSchema): void {
  const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
  defineParser(schema, "DateTime", (value) => {
    if (typeof value !== "string" || !ISO_8601.test(value) || Number.isNaN(Date.parse(value))) {
      throw new GraphQLError(`${JSON.stringify(value)} is not an ISO 8601 date and time`);
    }
    return value;
  });
  defineParser(schema, "URL", (value) => {
    if (typeof value !== "string" || !URL.canParse(value)) throw new GraphQLError(`${JSON.stringify(value)} is not a valid URL`);
    return value;
  });
}

function defineParser(schema: GraphQLSchema, name: string, parse: (value: unknown) => string): void {
  const scalar = schema.getType(name);
  if (!(scalar instanceof GraphQLScalarType)) throw new Error(`The schema has no scalar ${name}`);
  Object.assign(scalar, {
    parseValue: parse,
    parseLiteral: (node: ValueNode) => {
      if (node.kind !== Kind.STRING) throw new GraphQLError(`${name} must be a string`);
      return parse(node.value);
    },
  });
}
