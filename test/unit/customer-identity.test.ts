// How the app keys a customer's phone, and how customers/redact and customers/data_request
// look a phone up (customerFilter): by its key, by the exact form Shopify sends, and by the key
// an earlier release gave the same phone.
import { describe, expect, it } from "vitest";
import { customerPhoneKey } from "../../app/shops/customer-identity";
import { customerFilter } from "../../app/shops/shopify-webhooks.server";

describe("customerPhoneKey", () => {
  it.each([
    ["+34 611 222 333", "+34611222333"],
    ["+34611222333", "+34611222333"],
    [" +1 (415) 555-0100 ", "+14155550100"],
    // Written with its country code otherwise than with a leading "+": the same key.
    ["0034.611/222-333", "+34611222333"],
    ["(+34) 611 222 333", "+34611222333"],
    ["611 222 333", "611222333"],
    // A "+" after digits does not make a country code of them.
    ["34+611222555", "34611222555"],
  ])("keys %j as %j", (phone, key) => {
    expect(customerPhoneKey(phone)).toBe(key);
  });

  it("keys a phone without digits, or none, as null", () => {
    expect([customerPhoneKey(""), customerPhoneKey("  "), customerPhoneKey("n/a"), customerPhoneKey(null), customerPhoneKey(undefined)]).toEqual([null, null, null, null, null]);
  });
});

describe("customerFilter", () => {
  it("looks a phone-only customer up by the phone's key and by the form Shopify sent", () => {
    expect(customerFilter("shop", { email: null, phone: "+34 611 222 333" })).toEqual({
      shopId: "shop",
      OR: [{ customerEmail: null, customerPhone: { in: ["+34611222333", "+34 611 222 333", "0034611222333"] } }],
    });
    // And by the key an earlier release gave the same phone typed with "00" (kept as typed then);
    // never by its digits without the "+", which are as well another country's number typed
    // without its code ("(34) 61122-2333" in Brazil).
    expect(customerFilter("shop", { email: null, phone: "+34611222333" })).toEqual({ shopId: "shop", OR: [{ customerEmail: null, customerPhone: { in: ["+34611222333", "0034611222333"] } }] });
    expect(customerFilter("shop", { email: null, phone: "611 222 333" })).toEqual({ shopId: "shop", OR: [{ customerEmail: null, customerPhone: { in: ["611222333", "611 222 333"] } }] });
    expect(customerFilter("shop", { email: null, phone: null })).toBeNull();
  });
});
