// The sandbox against what the recorded examples and SPEC.md show of the real gateway, where
// that is more than FACTS.md's ranges: an Ether order's window, and a Lightning invoice's end.
import { describe, expect, it } from "vitest";
import { action, createOrder, gatewayExample, info, sandboxForThisFile } from "../sandbox/helpers.js";

const t = sandboxForThisFile();
const MINUTE = 60_000;

describe("expiry window of an ETH order", () => {
  // Source: test/fixtures/gateway/orders-info.response.eth_test.2022-10.Naza2021.json, the only
  // recorded order of an Ether coin: edited_at 15:01:02.126543 (currency fixed), expired_time
  // 15:16:02.124192, i.e. the window is 15 minutes. FACTS.md: "a PE order unpaid at its
  // expired_time (15-60 min after the currency was fixed, per currency) goes to EX".
  it("expires an ETH order 15 minutes after its currency is fixed, as the recorded ETH order does", async () => {
    const recorded = gatewayExample("orders-info.response.eth_test.2022-10.Naza2021.json").body[0];
    const recordedWindowMin = Math.round((Date.parse(recorded.expired_time) - Date.parse(recorded.edited_at)) / MINUTE);
    expect(recordedWindowMin).toBe(15);

    const o = await createOrder(t.sandbox, { expected_output_amount: 20, fiat: "EUR", input_currency: "ETH" });
    const read = await info(t.sandbox, o.identifier);
    const windowMin = (Date.parse(read.expired_time) - Date.parse(read.created_at)) / MINUTE;
    expect(windowMin).toBe(recordedWindowMin);

    t.clock.advance(16 * MINUTE);
    expect((await info(t.sandbox, o.identifier)).status).toBe("EX");
  });
});

describe("Lightning (BTCL) after its invoice expired", () => {
  // Source: SPEC.md "Integration modes", Lightning row: "payment_uri holds a BOLT11 invoice.
  // Confirmation is practically instant." The sandbox's own invoice carries an expiry equal to
  // the order's window (sandbox/payment-targets.ts, lightningInvoice(..., expirySeconds)); an
  // expired BOLT11 invoice cannot be paid, and a Lightning payment never sits unconfirmed.
  // FACTS.md's late-payment decision ("a payment that arrives after EX is still recorded")
  // describes on-chain funds sent to an address, which Lightning has none of.
  it("refuses to record a payment of an expired Lightning invoice (never an unconfirmed Lightning transaction)", async () => {
    const o = await createOrder(t.sandbox, { expected_output_amount: 20, fiat: "EUR", input_currency: "BTCL" });
    t.clock.advance(16 * MINUTE);
    expect((await info(t.sandbox, o.identifier)).status).toBe("EX");

    const late = await action(t.sandbox, o.identifier, { action: "pay", amount: "exact" });
    expect(late.status).toBe(409);

    const read = await info(t.sandbox, o.identifier);
    expect(read.transactions).toEqual([]);
    expect(read.unconfirmed_amount).toBe(0);
  });
});
