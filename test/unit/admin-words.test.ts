// The admin's words for a payment: its state (what the gateway says, never what Shopify was
// told, which the Shopify side says), how much of a confirming payment arrived, and the
// timeline's entries for the events the app writes, each field of whose detail is read on
// its own.
import { describe, expect, it } from "vitest";
import { paymentStateWords } from "../../app/admin/status-words";
import { describeEvent } from "../../app/admin/timeline";

describe("paymentStateWords", () => {
  it("says a paid payment was confirmed by the gateway, and nothing of Shopify", () => {
    const paid = paymentStateWords("paid");
    expect(paid.label).toBe("Paid");
    expect(paid.meaning).toBe("The gateway confirmed the payment.");
    expect(paid.meaning).not.toContain("Shopify");
  });

  it("says a confirming payment below 100 % has part of its amount, with the rest due before the order expires", () => {
    expect(paymentStateWords("confirming", { percentage: "50.0" }).meaning).toBe("Part of the amount (50.0%) has arrived; the rest is due before the order expires.");
    expect(paymentStateWords("confirming", { percentage: "99.9" }).meaning).toContain("Part of the amount (99.9%)");
  });

  it("says a confirming payment at 100 % or more was received", () => {
    expect(paymentStateWords("confirming", { percentage: "100.0" }).meaning).toBe("Crypto was received and is waiting for network confirmation.");
    expect(paymentStateWords("confirming", { percentage: "120.5" }).meaning).toBe("Crypto was received and is waiting for network confirmation.");
  });

  it("decides on the on-chain amounts once they are known: one unit short is part of the amount, though the rounded percentage reads 100.0", () => {
    const short = { percentage: "100.0", cryptoAmount: "0.01580000", transactions: [{ amount: "0.01" }, { amount: "0.00579999" }] };
    expect(paymentStateWords("confirming", short).meaning).toBe("Part of the amount (0.01579999 of 0.01580000) has arrived; the rest is due before the order expires.");
    const whole = { percentage: "99.9", cryptoAmount: "0.0158", transactions: [{ amount: "0.0158" }] };
    expect(paymentStateWords("confirming", whole).meaning).toBe("Crypto was received and is waiting for network confirmation.");
  });

  it("claims neither the whole amount nor part of it for a confirming payment without a readable percentage", () => {
    for (const percentage of [undefined, null, "", "0.0", "n/a"]) {
      const meaning = paymentStateWords("confirming", { percentage: percentage }).meaning;
      expect(meaning, String(percentage)).toBe("Crypto was seen at the gateway and is waiting for network confirmation.");
    }
  });
});

describe("describeEvent", () => {
  it("words the verified event: the gateway order read agrees with the notification that settled the payment", () => {
    const entry = describeEvent("verified", JSON.stringify({ status: "CO", source: "reconcile" }));
    expect(entry).toEqual({
      title: "Gateway order verified",
      description: "The gateway order was read through the periodic check and shows Completed: it agrees with the notification that settled the payment.",
    });
    expect(describeEvent("verified", "{}").description).toBe("The gateway order was read: it agrees with the notification that settled the payment.");
  });

  it("words every source a gateway status was seen through, the signed notification that settles without a read among them", () => {
    const seen = (source: string) => describeEvent("gateway_status", JSON.stringify({ from: "AC", to: "CO", source })).description;
    expect(seen("signed_webhook")).toContain("(seen through a signed gateway notification, trusted without reading the order)");
    for (const source of ["webhook", "return", "reconcile", "check", "create"]) expect(seen(source)).not.toContain(`through ${source})`);
  });

  it("says whether the app accepted or refused a capture, with the payment's currency", () => {
    const eur = { currency: "EUR" };
    expect(describeEvent("capture_requested", JSON.stringify({ amount: "49.90", answer: "capture.resolve" }), eur).description).toBe("A capture of 49.90 EUR was asked. The app accepted it.");
    expect(describeEvent("capture_requested", JSON.stringify({ amount: "20", answer: "capture.reject" }), eur).description).toBe(
      "A capture of 20.00 EUR was asked. The app refused it; Shopify shows the merchant why.",
    );
  });

  it("says the app refused a refund, with the payment's currency, and how to return the money: the whole payment from the dashboard, a part another way", () => {
    const whole = describeEvent("refund_requested", JSON.stringify({ amount: "1500", answer: "refund.reject" }), { currency: "JPY", amount: "1500" });
    expect(whole.description).toBe(
      "A refund of 1500 JPY was asked. The app refused it; Shopify shows the merchant why. The gateway has no refund API: refund the payment once from the gateway dashboard (it sends the shopper a voucher for the whole amount).",
    );
    // The dashboard would give back the whole 100.00 EUR for a refund of 10.00.
    const part = describeEvent("refund_requested", JSON.stringify({ amount: "10.00", currency: "EUR", answer: "refund.reject" }), { currency: "EUR", amount: "100.00" });
    expect(part.description).toBe(
      "A refund of 10.00 EUR was asked. The app refused it; Shopify shows the merchant why. The gateway refunds a payment only in full: return that part to the shopper another way, then record it in Shopify as a manual refund.",
    );
    expect(part.description).not.toContain("dashboard");
    // The payment's amount unknown: both ways, each for its case.
    expect(describeEvent("refund_requested", JSON.stringify({ amount: "1500", answer: "refund.reject" }), { currency: "JPY" }).description).toContain("for a part, return that part");
  });

  it("says whether the app accepted or refused a void", () => {
    expect(describeEvent("void_requested", JSON.stringify({ answer: "void.resolve" })).description).toBe("Shopify asked to void the authorization. The app accepted it.");
    expect(describeEvent("void_requested", JSON.stringify({ answer: "void.reject" })).description).toBe("Shopify asked to void the authorization. The app refused it; Shopify shows the merchant why.");
  });

  it("names the gateway status of a read that reported no percentage, and lets no odd field blank an entry", () => {
    // Settlement stores percentage: null for the gateway's older order shape.
    const older = describeEvent("gateway_status", JSON.stringify({ from: "NR", to: "PE", source: "reconcile", percentage: null }));
    expect(older.title).toBe("Gateway: Pending");
    expect(older.description).toMatch(/^From Not Ready to Pending \(seen through the periodic check\)\. /);
    expect(older.description).not.toContain("% paid");
    const odd = describeEvent("gateway_status", JSON.stringify({ from: "AC", to: "CO", source: 7, percentage: 100, adopted: "yes" }));
    expect(odd.title).toBe("Gateway: Completed");
    expect(odd.description).toMatch(/^From Awaiting Completion to Completed\. /);
  });

  it("says why a payment could not start in the gateway's own words, and that Shopify showed the shopper an error", () => {
    const refused = describeEvent(
      "session_refused",
      JSON.stringify({ status: 422, reason: "rejected", cause: "Amount 5.00 EUR is below the minimum amount of 10.00 EUR for USDC_ERC20." }),
    );
    expect(refused).toEqual({
      title: "Payment could not start",
      description:
        'The gateway refused the order: "Amount 5.00 EUR is below the minimum amount of 10.00 EUR for USDC_ERC20." Shopify got an error answer and showed the shopper an error at checkout, where they can try again or pay another way.',
    });
    expect(describeEvent("session_refused", JSON.stringify({ status: 422, reason: "rejected" })).description).toMatch(/^The gateway refused the order\. Shopify got an error answer/);
    expect(describeEvent("session_refused", JSON.stringify({ status: 422, reason: "unauthorized" })).description).toContain("refused the shop's device key");
    expect(describeEvent("session_refused", JSON.stringify({ status: 422 })).description).toMatch(/^No gateway order was created\. /);
    for (const type of ["session_refused", "coin_refused"]) expect(describeEvent(type, JSON.stringify({ reason: "rejected" })).description).not.toContain("sent back");
  });

  it("words a coin the gateway refused for the payment's amount on the app's page", () => {
    const entry = describeEvent("coin_refused", JSON.stringify({ currency: "USDC_ERC20", limit: "below_min", cause: "Amount 5.00 USD is below the minimum amount of 10.80 USD for USDC_ERC20." }));
    expect(entry).toEqual({
      title: "Coin refused for this amount: USDC_ERC20",
      description:
        'The shopper picked USDC_ERC20 on the app\'s payment page; the gateway refused it for this amount: "Amount 5.00 USD is below the minimum amount of 10.80 USD for USDC_ERC20." It is no longer offered for this payment.',
    });
    // Refused in words that name no limit: not said to be about the amount.
    expect(describeEvent("coin_refused", JSON.stringify({ currency: "LTC", limit: "none_named", cause: "Not found." }))).toEqual({
      title: "Coin refused for this payment: LTC",
      description: 'The shopper picked LTC on the app\'s payment page; the gateway refused it: "Not found." It is no longer offered for this payment.',
    });
  });

  it("words a request without its answer or amount as asked, claiming no answer", () => {
    expect(describeEvent("capture_requested", "{}", { currency: "EUR" }).description).toBe("A capture of ? was asked.");
    expect(describeEvent("void_requested", "not json").description).toBe("Shopify asked to void the authorization.");
  });
});
