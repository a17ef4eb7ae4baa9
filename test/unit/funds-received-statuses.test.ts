// Which gateway statuses show crypto received (a late one needs a person, a void
// over it is flagged). Every status of an order holding the shopper's crypto does, the
// underpaid (IA) and out-of-condition (OC) ones included; none of those that ended with nothing.
import { describe, expect, it } from "vitest";
import { GATEWAY_STATUSES } from "../../app/gateway/statuses";
import { statusShowsFundsReceived } from "../../app/payments/status-mapping";
import { storedStatusShowsFunds } from "../../app/payments/settle-payment";

const WITH_FUNDS = ["AC", "CO", "CM", "IA", "OC"];

describe("statuses that show crypto received", () => {
  it.each(GATEWAY_STATUSES.map((status) => [status, WITH_FUNDS.includes(status)] as const))("%s shows funds: %s", (status, funds) => {
    expect(statusShowsFundsReceived(status)).toBe(funds);
    expect(storedStatusShowsFunds({ gatewayStatus: status })).toBe(funds);
  });

  it("an unknown or missing stored status shows none", () => {
    expect(storedStatusShowsFunds({ gatewayStatus: null })).toBe(false);
    expect(storedStatusShowsFunds({ gatewayStatus: "RF" })).toBe(false);
  });
});
