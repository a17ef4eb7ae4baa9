import { describe, expect, it } from "vitest";
import { gatewayStatusSchema } from "../../app/gateway/schemas";
import { GATEWAY_STATUSES, gatewayStatusInfo, isFinalGatewayStatus, isGatewayStatus, parseGatewayStatus } from "../../app/gateway/statuses";

describe("gateway statuses", () => {
  it.each([
    ["NR", "Not Ready", false],
    ["PE", "Pending", false],
    ["AC", "Awaiting Completion", false],
    ["IA", "Insufficient Amount", true],
    ["CO", "Completed", true],
    ["CM", "Completed by Merchant", true],
    ["CA", "Cancelled", true],
    ["EX", "Expired", true],
    ["OC", "Out of Condition", true],
    ["FA", "Failed", true],
    ["DE", "Deleted", true],
  ] as const)("%s is %s, final: %s", (code, name, final) => {
    expect(gatewayStatusInfo[code].name).toBe(name);
    expect(isFinalGatewayStatus(code)).toBe(final);
    expect(parseGatewayStatus(code)).toMatchObject({ known: true, code });
  });

  it("lists exactly the 11 documented codes", () => {
    expect([...GATEWAY_STATUSES].sort()).toEqual(Object.keys(gatewayStatusInfo).sort());
    expect(GATEWAY_STATUSES).toHaveLength(11);
  });

  it.each(["RF", "co", "", "toString", "__proto__"])("keeps the unknown code %j flagged, not known", (code) => {
    expect(parseGatewayStatus(code)).toEqual({ known: false, code });
    expect(isGatewayStatus(code)).toBe(false);
  });

  it("takes a stored status never read (null) for no known status", () => {
    expect(isGatewayStatus(null)).toBe(false);
    expect(isGatewayStatus("CO")).toBe(true);
  });

  it("the strict schema refuses unknown codes", () => {
    expect(gatewayStatusSchema.safeParse("RF").success).toBe(false);
    expect(gatewayStatusSchema.safeParse("CO").success).toBe(true);
  });
});
