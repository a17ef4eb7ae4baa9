// Each Shopify webhook topic's body is told from the others' by its own fields: the HMAC signs
// the body only, so a delivered body posted under another topic's header must be refused. Every
// topic's body, shaped as Shopify documents it, is taken by its own schema and by no other.
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { appUninstalledBody, customersRedactBody, dataRequestBody, scopesUpdateBody, shopRedactBody } from "../../app/lib/shopify-webhook-bodies";

const SHOP = "demo-shop.myshopify.com";
const customer = { id: 191167, email: "john@example.com", phone: "555-625-1199" };

const topics: Record<string, { schema: z.ZodTypeAny; body: Record<string, unknown> }> = {
  "app/uninstalled": {
    schema: appUninstalledBody,
    body: { id: 548380009, name: "Super Toys", email: "super@supertoys.com", domain: null, myshopify_domain: SHOP, currency: "USD", plan_name: "basic" },
  },
  "shop/redact": { schema: shopRedactBody, body: { shop_id: 954889, shop_domain: SHOP } },
  "customers/redact": { schema: customersRedactBody, body: { shop_id: 954889, shop_domain: SHOP, customer, orders_to_redact: [299938, 280263, 220458] } },
  "customers/data_request": {
    schema: dataRequestBody,
    body: { shop_id: 954889, shop_domain: SHOP, orders_requested: [299938, 280263, 220458], customer, data_request: { id: 9999 } },
  },
  "app/scopes_update": {
    schema: scopesUpdateBody,
    body: { id: 1, previous: ["write_payment_gateways"], current: ["write_payment_gateways", "write_payment_sessions"], updated_at: "2026-11-01T10:00:00Z", created_at: "2026-10-01T10:00:00Z" },
  },
};

describe.each(Object.entries(topics))("the %s body", (topic, { schema }) => {
  it("takes the topic's own body", () => {
    expect(schema.safeParse(topics[topic]!.body).success).toBe(true);
  });

  it.each(Object.keys(topics).filter((other) => other !== topic))("refuses a %s body", (other) => {
    expect(schema.safeParse(topics[other]!.body).success).toBe(false);
  });
});

describe("bodies Shopify may send with fields missing or empty", () => {
  it("an uninstall's shop object with its domains null is still an uninstall (a refusal would be retried, the uninstall never handled)", () => {
    expect(appUninstalledBody.safeParse({ id: 1, domain: null, myshopify_domain: null }).success).toBe(true);
  });

  it("a data request for a customer with no e-mail or phone, and no orders listed", () => {
    expect(dataRequestBody.safeParse({ shop_id: 1, shop_domain: SHOP, customer: { id: 1, email: null, phone: null }, orders_requested: [], data_request: { id: 1 } }).success).toBe(true);
  });

  it("a data request for a customer with more orders than any fixed count: the body's size is the only bound (a refusal would be retried, the request never taken)", () => {
    const orders = Array.from({ length: 25_000 }, (_, i) => 5_000_000_000 + i);
    expect(JSON.stringify(orders).length).toBeLessThan(1024 * 1024);
    const parsed = dataRequestBody.safeParse({ shop_id: 1, shop_domain: SHOP, customer: { id: 1, email: "a@example.com", phone: null }, orders_requested: orders, data_request: { id: 1 } });
    expect(parsed.success && parsed.data.orders_requested?.length).toBe(25_000);
  });

  it("a redaction with no orders to redact", () => {
    expect(customersRedactBody.safeParse({ shop_id: 1, shop_domain: SHOP, customer: { id: 1, email: "a@example.com", phone: null }, orders_to_redact: [] }).success).toBe(true);
  });
});
