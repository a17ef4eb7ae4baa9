// Every document the app sends must be valid against Shopify's real schema.
import { describe, expect, it } from "vitest";
import { Kind, parse, validate, type OperationDefinitionNode } from "graphql";
import { PAYMENTS_APPS_DOCUMENTS } from "~/shopify/payments-apps/documents";
import { loadPaymentsAppsSchema } from "./payments-apps-schema";

const schema = loadPaymentsAppsSchema();

describe("Payments Apps documents", () => {
  it("covers every mutation the app needs, and the API's one query", () => {
    expect(PAYMENTS_APPS_DOCUMENTS.map((d) => d.operationName).sort()).toEqual(
      [
        "CaptureSessionReject",
        "CaptureSessionResolve",
        "PaymentSessionPending",
        "PaymentSessionReject",
        "PaymentSessionResolve",
        "PaymentsAppConfigure",
        "PublicApiVersions",
        "RefundSessionReject",
        "RefundSessionResolve",
        "VoidSessionReject",
        "VoidSessionResolve",
      ].sort(),
    );
  });

  it.each(PAYMENTS_APPS_DOCUMENTS.map((d) => [d.operationName, d.document] as const))(
    "%s validates against the 2026-04 schema",
    (operationName, document) => {
      const ast = parse(document);
      const operations = ast.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
      expect(operations).toHaveLength(1);
      // PublicApiVersions asks whether Shopify takes the token, and changes nothing.
      expect(operations[0]?.operation).toBe(operationName === "PublicApiVersions" ? "query" : "mutation");
      expect(operations[0]?.name?.value).toBe(operationName);
      expect(validate(schema, ast).map((e) => e.message)).toEqual([]);
    },
  );

  it("the validation catches a misspelt field", () => {
    const first = PAYMENTS_APPS_DOCUMENTS[0];
    const broken = first.document.replace("redirectUrl", "redirectURL");
    expect(broken).not.toBe(first.document);
    expect(validate(schema, parse(broken)).length).toBeGreaterThan(0);
  });
});
