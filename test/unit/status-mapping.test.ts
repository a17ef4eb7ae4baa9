import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { GATEWAY_STATUSES, parseGatewayStatus, type GatewayStatus } from "../../app/gateway/statuses";
import { decideForGatewayStatus, decideForParsedStatus, overpaymentDetail } from "../../app/payments/status-mapping";
import { isFinalPaymentState, nextState, stateForDecision, type PaymentState } from "../../app/payments/payment-state";
import { documentedOrder } from "../gateway/support/fixtures";

describe("the status mapping", () => {
  it.each([
    ["NR", "wait", null],
    ["PE", "wait", null],
    ["AC", "confirming", null],
    ["CO", "resolve", null],
    ["CM", "resolve", null],
    ["EX", "reject", "CANCELLED_PAYMENT"],
    ["CA", "reject", "CANCELLED_PAYMENT"],
    ["DE", "reject", "CANCELLED_PAYMENT"],
    ["FA", "reject", "PROCESSING_ERROR"],
    ["IA", "reject", "INSUFFICIENT_FUNDS"],
    ["OC", "reject", "PROCESSING_ERROR"],
  ] as const)("%s → %s %s", (status, kind, code) => {
    const decision = decideForGatewayStatus(status);
    expect(decision.kind).toBe(kind);
    if (decision.kind === "reject") {
      expect(decision.code).toBe(code);
      expect(decision.merchantMessage.length).toBeGreaterThan(20);
    }
  });

  it("flags underpaid and out-of-condition payments: money was received", () => {
    expect(decideForGatewayStatus("IA")).toMatchObject({ attention: "underpaid" });
    expect(decideForGatewayStatus("OC")).toMatchObject({ attention: "out_of_condition" });
    expect(decideForGatewayStatus("EX")).not.toHaveProperty("attention");
  });

  it("never treats an unknown status as paid", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 6 }).filter((s) => !(GATEWAY_STATUSES as readonly string[]).includes(s)), (code) => {
        const decision = decideForParsedStatus(parseGatewayStatus(code));
        expect(decision.kind).toBe("review");
      }),
    );
  });

  it("covers every status the gateway documents", () => {
    for (const status of GATEWAY_STATUSES) expect(() => decideForGatewayStatus(status)).not.toThrow();
  });
});

describe("an overpaid order", () => {
  // The documented order: 0.00245 BTC asked, 100.0 %, one transaction of 0.00245 BTC.
  const completed = (transactions: number, percentage: string | null = "100.0") => ({
    ...documentedOrder("1040095a-737d-41a2-a2e1-d031d19ec8cd", "CO", transactions, "2026-04-17T10:12:45Z"),
    percentage,
  });

  it("is told by its transactions once they are known: how much more than was due arrived, and that a dashboard refund would return everything", () => {
    expect(overpaymentDetail(completed(2))).toBe(
      "The shopper sent more than the order's amount. 0.0049 BTC arrived for the 0.00245 BTC asked: 0.00245 BTC more than was due. The order is paid; the extra belongs to the shopper. A refund from the gateway dashboard returns the full amount, not the extra alone: return the extra another way, as agreed with the shopper.",
    );
    expect(overpaymentDetail(completed(2, "200.0"))).toContain("0.00245 BTC more than was due (the gateway shows 200.0% paid).");
  });

  it("is told by the gateway's percentage above 100 before the transactions are known", () => {
    expect(overpaymentDetail(completed(0, "110.0"))).toBe(
      "The shopper sent more than the order's amount. More than was due arrived: the gateway shows 110.0% paid. The order is paid; the extra belongs to the shopper. A refund from the gateway dashboard returns the full amount, not the extra alone: return the extra another way, as agreed with the shopper.",
    );
  });

  it("is not one when exactly the amount arrived, or nothing says more did", () => {
    expect(overpaymentDetail(completed(1))).toBeNull();
    expect(overpaymentDetail(completed(0, "100.0"))).toBeNull();
    expect(overpaymentDetail(completed(0, null))).toBeNull();
    // The on-chain amounts decide over the rounded percentage.
    expect(overpaymentDetail(completed(1, "100.01"))).toBeNull();
  });
});

describe("the payment state machine", () => {
  const status = fc.constantFrom<GatewayStatus>(...GATEWAY_STATUSES);
  const rank = (s: PaymentState) => ({ started: 0, awaiting_payment: 1, confirming: 2, paid: 3, failed: 3, not_started: 3 })[s];

  it("any sequence of statuses, with duplicates and reorderings, never moves backwards and ends final at most once", () => {
    fc.assert(
      fc.property(fc.array(status, { maxLength: 40 }), (sequence) => {
        let state: PaymentState = "awaiting_payment";
        let finals = 0;
        for (const s of sequence) {
          const next = nextState(state, stateForDecision(decideForGatewayStatus(s)));
          expect(rank(next)).toBeGreaterThanOrEqual(rank(state));
          if (isFinalPaymentState(next) && !isFinalPaymentState(state)) finals++;
          if (isFinalPaymentState(state)) expect(next).toBe(state);
          state = next;
        }
        expect(finals).toBeLessThanOrEqual(1);
        const firstFinal = sequence.find((s) => isFinalPaymentState(stateForDecision(decideForGatewayStatus(s)) ?? "awaiting_payment"));
        if (firstFinal) expect(state).toBe(stateForDecision(decideForGatewayStatus(firstFinal)));
      }),
    );
  });
});
