// Loads the real Payments Apps 2026-04 schema (an introspection result) for tests.
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { buildClientSchema, type GraphQLSchema, type IntrospectionQuery } from "graphql";

const SCHEMA_FILE = fileURLToPath(new URL("../fixtures/shopify/payments-apps_2026-04.json.gz", import.meta.url));

export function loadPaymentsAppsSchema(): GraphQLSchema {
  const json = JSON.parse(gunzipSync(readFileSync(SCHEMA_FILE)).toString("utf8")) as { data: IntrospectionQuery };
  return buildClientSchema(json.data);
}
