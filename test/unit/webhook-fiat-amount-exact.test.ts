// A signed webhook settles an open payment by itself only when its fiat amount
// is the payment's amount, compared as decimals. Compared as floats, 25.500000000000000001
// (or 25.49999999999999999) is "25.50", and a webhook for another amount would settle the
// payment paid with no read of the gateway's own record.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { agreedStatus, trustedFinalReport } from "../../app/payments/process-webhooks";

const orderId = randomUUID();
const payment = { gatewayOrderId: orderId, amount: "25.50", currency: "EUR" };
const hook = (fiatAmount: string) => ({ orderId, rawBody: `{"fiat_amount": ${fiatAmount}, "fiat_currency": "EUR", "status": "CO", "identifier": "${orderId}"}` });

describe("a signed webhook's fiat amount against the payment's", () => {
  it.each(["25.5", "25.50", "25.500000"])("%s is the payment's 25.50: its final status is trusted", (amount) => {
    expect(agreedStatus(hook(amount), payment)?.code).toBe("CO");
    expect(trustedFinalReport(hook(amount), payment)?.status.code).toBe("CO");
  });

  it.each(["25.500000000000000001", "25.49999999999999999", "25.5000000000000001"])(
    "%s is not 25.50, though a float cannot tell them apart: nothing is trusted, the order is read instead",
    (amount) => {
      expect(Number(amount)).toBe(25.5);
      expect(agreedStatus(hook(amount), payment)).toBeNull();
      expect(trustedFinalReport(hook(amount), payment)).toBeNull();
    },
  );
});
