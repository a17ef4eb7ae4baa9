import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { createOrderRequestSchema } from "../../app/gateway/schemas";
import { cutText, gatewayCustomerFields } from "../../app/payments/customer-fields";
import { addressSchema } from "../../app/payments/shopify-requests";
import { isEmail as sandboxTakesEmail } from "../../sandbox/drf-fields";
import { EMAILS_LEFT_OUT_THOUGH_VALID, EMAILS_THE_GATEWAY_REFUSES, EMAILS_THE_GATEWAY_TAKES } from "../gateway/support/email-cases";

describe("customer fields for the gateway", () => {
  it("cuts to the bound without splitting a character", () => {
    expect(cutText("👩‍👩‍👧‍👦".repeat(10), 12)).toBe("👩‍👩‍👧‍👦");
    expect(cutText("José María", 4)).toBe("José");
    expect(cutText("  spaced   out  ", 48)).toBe("spaced out");
    expect(cutText("", 10)).toBeUndefined();
  });

  it("takes out control characters and lone surrogates, which the gateway refuses with a 400", () => {
    expect(cutText("Ann\u0000Lee", 48)).toBe("Ann Lee");
    expect(cutText("Calle\u0000 Mayor\u0007 1\u007f", 256)).toBe("Calle Mayor 1");
    expect(cutText("Ma\ud83d", 28)).toBe("Ma");
    expect(cutText("\ude00Madrid\ud83d\ud83d\ude00", 28)).toBe("Madrid \ud83d\ude00");
    expect(cutText("\u0000\ud800", 10)).toBeUndefined();
    const fields = gatewayCustomerFields({
      email: "ann@example.com",
      billing_address: { given_name: "Ann\u0000", family_name: "Lee", line1: "Calle\u0000 Mayor 1", city: "Ma\udc00drid", country_code: "ES" },
    });
    expect(fields).toEqual({ full_name: "Ann Lee", email_client: "ann@example.com", home_address: "Calle Mayor 1", city: "Ma drid", country: "ES" });
  });

  it("produces fields the gateway accepts from any code points, lone surrogates and NULs included", () => {
    const text = fc.option(fc.string({ maxLength: 300, unit: "binary" }), { nil: undefined });
    fc.assert(
      fc.property(fc.record({ given_name: text, family_name: text, line1: text, line2: text, city: text, province: text, postal_code: text }), (address) => {
        const fields = gatewayCustomerFields({ billing_address: address });
        for (const value of Object.values(fields)) expect(value).not.toMatch(/[\p{Cc}\p{Cs}]/u);
        const parsed = createOrderRequestSchema.safeParse({ expected_output_amount: "10.00", fiat: "EUR", input_currency: "BTC", ...fields });
        expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it("leaves out an e-mail that is too long rather than cutting it", () => {
    const fields = gatewayCustomerFields({ email: `${"a".repeat(120)}@example.com` });
    expect(fields.email_client).toBeUndefined();
    expect(gatewayCustomerFields({ email: "ana@example.com" }).email_client).toBe("ana@example.com");
  });

  it("leaves out an e-mail the gateway's own check would refuse, so the order is still created", () => {
    for (const email of ["josé@example.com", "user@müller.de", "a@b.c", "first..last@example.com", "user@sub_domain.com"]) {
      const fields = gatewayCustomerFields({ email, billing_address: { given_name: "Ana", family_name: "Ruiz" } });
      expect(fields.email_client, email).toBeUndefined();
      expect(fields.full_name).toBe("Ana Ruiz");
      expect(createOrderRequestSchema.safeParse({ expected_output_amount: "10.00", fiat: "EUR", input_currency: "BTC", ...fields }).success, email).toBe(true);
    }
  });

  it.each([...EMAILS_THE_GATEWAY_REFUSES, ...EMAILS_LEFT_OUT_THOUGH_VALID])("leaves out %j, which the gateway's EmailValidator refuses or this app does not risk", (email) => {
    expect(gatewayCustomerFields({ email }).email_client).toBeUndefined();
  });

  it.each(EMAILS_THE_GATEWAY_TAKES)("keeps %s, which the gateway takes", (email) => {
    expect(gatewayCustomerFields({ email: ` ${email} ` }).email_client).toBe(email);
  });

  it("keeps a real ISO country code and leaves out one the gateway would refuse", () => {
    expect(gatewayCustomerFields({ billing_address: { country_code: "es" } }).country).toBe("ES");
    expect(gatewayCustomerFields({ billing_address: { country_code: "DA" } }).country).toBeUndefined();
  });

  it("always produces fields the gateway accepts, whatever the shopper typed", () => {
    const text = fc.option(fc.string({ maxLength: 400, unit: "grapheme" }), { nil: undefined });
    // Random text is almost never e-mail shaped: addresses, and addresses with a local part
    // of any characters, are drawn as well.
    const email = fc.oneof(
      text,
      fc.emailAddress(),
      fc.tuple(fc.string({ minLength: 1, maxLength: 20, unit: "grapheme" }), fc.domain()).map(([local, domain]) => `${local}@${domain}`),
      // Domain labels of any length and hyphens at either end, which Django refuses.
      fc
        .tuple(fc.stringMatching(/^[a-z0-9]{1,12}$/), fc.array(fc.stringMatching(/^[a-z0-9-]{1,70}$/), { minLength: 1, maxLength: 3 }), fc.constantFrom("com", "io"))
        .map(([local, labels, tld]) => `${local}@${[...labels, tld].join(".")}`),
    );
    fc.assert(
      fc.property(
        fc.record({ email, phone_number: text, given_name: text, family_name: text, line1: text, line2: text, city: text, province: text, postal_code: text, country_code: text }),
        (c) => {
          const fields = gatewayCustomerFields({
            email: c.email,
            phone_number: c.phone_number,
            billing_address: { given_name: c.given_name, family_name: c.family_name, line1: c.line1, line2: c.line2, city: c.city, province: c.province, postal_code: c.postal_code, country_code: c.country_code },
          });
          const parsed = createOrderRequestSchema.safeParse({ expected_output_amount: "10.00", fiat: "EUR", input_currency: "BTC", ...fields });
          expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
          // And the gateway's own check (as the sandbox reproduces it) takes the address kept.
          if (fields.email_client !== undefined) expect(sandboxTakesEmail(fields.email_client), fields.email_client).toBe(true);
        },
      ),
      // A country-shaped code is drawn often, so codes the gateway refuses are exercised every run.
      { numRuns: 300, examples: [[{ email: undefined, phone_number: undefined, given_name: undefined, family_name: undefined, line1: undefined, line2: undefined, city: undefined, province: undefined, postal_code: undefined, country_code: "DA" }]] },
    );
  });
});

describe("the address a payment keeps", () => {
  it("holds only the fields the flows use, and gives the gateway the same fields as the address Shopify sent", () => {
    const sent = {
      given_name: "Mina",
      family_name: "Malstore",
      line1: "Calle Corta 5",
      line2: "2º B",
      city: "Bilbao",
      province: "Bizkaia",
      province_code: "BI",
      postal_code: "48001",
      country_code: "ES",
      phone_number: "+34 600 111 222",
      company: "Malstore Consulting SL",
      some_later_field: "kept by nobody",
    };
    const address = addressSchema.parse(sent);
    const stored = JSON.parse(JSON.stringify(address)) as typeof address;
    expect(Object.keys(stored).sort()).toEqual(["city", "country_code", "family_name", "given_name", "line1", "line2", "phone_number", "postal_code", "province"]);
    // The app page's order is made from the stored copy: the gateway is given what the session's order was.
    const fields = gatewayCustomerFields({ billing_address: stored });
    expect(fields).toEqual(gatewayCustomerFields({ billing_address: sent }));
    expect(Object.keys(fields).sort()).toEqual(["address_additional", "city", "country", "full_name", "home_address", "phone_number", "province", "zip_code"]);
  });
});
