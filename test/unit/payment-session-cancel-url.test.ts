// Where a payment session request gives the checkout's cancel URL: under payment_method.data (the
// documented place) or at the top level (some API versions). Either may be null when the other
// carries it, as may payment_method.data itself; with neither, the request is refused with a reason naming the documented field.
import { describe, expect, it } from "vitest";
import { paymentSessionRequestSchema } from "../../app/payments/shopify-requests";

const CANCEL = "https://demo-shop.myshopify.com/checkouts/c/abc/cancel";

function request(cancel: { data?: string | null; top?: string | null; noData?: true }) {
  return {
    id: "u0nwmSrNntjIWozmNslK5Tlq",
    gid: "gid://shopify/PaymentSession/u0nwmSrNntjIWozmNslK5Tlq",
    group: "rZNHAmDzK1CYZx5z",
    session_id: "FkbUWXbbkDMRm9cT",
    amount: "25.00",
    currency: "EUR",
    test: true,
    merchant_locale: "en",
    payment_method: { type: "offsite", data: cancel.noData ? null : "data" in cancel ? { cancel_url: cancel.data } : {} },
    ...("top" in cancel ? { cancel_url: cancel.top } : {}),
    proposed_at: "2026-12-03T10:00:00Z",
    kind: "sale",
  };
}

describe("a payment session's cancel URL", () => {
  it("is read from payment_method.data, or from the top level when that one is null or missing", () => {
    expect(paymentSessionRequestSchema.parse(request({ data: CANCEL })).cancelUrl).toBe(CANCEL);
    expect(paymentSessionRequestSchema.parse(request({ data: null, top: CANCEL })).cancelUrl).toBe(CANCEL);
    expect(paymentSessionRequestSchema.parse(request({ top: CANCEL })).cancelUrl).toBe(CANCEL);
    expect(paymentSessionRequestSchema.parse(request({ data: CANCEL, top: null })).cancelUrl).toBe(CANCEL);
    // payment_method.data itself null, the URL at the top level.
    expect(paymentSessionRequestSchema.parse(request({ noData: true, top: CANCEL })).cancelUrl).toBe(CANCEL);
  });

  it("is required: with neither, the request is refused naming the documented field", () => {
    for (const cancel of [{}, { data: null }, { data: null, top: null }, { noData: true as const }]) {
      const parsed = paymentSessionRequestSchema.safeParse(request(cancel));
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues.map((issue) => issue.path.join("."))).toEqual(["payment_method.data.cancel_url"]);
    }
  });
});
