// What a payment keeps of the shopper's phone and address, and how Shopify's privacy webhooks
// find a phone-only shopper, through the real routes.
import { expect, it } from "vitest";
import { sendShopifyWebhook } from "../support/shopify-webhooks";
import { stackForFile } from "../support/stack";

const stack = stackForFile({});
const db = () => stack().services.db;

type Customer = NonNullable<Parameters<ReturnType<typeof stack>["standin"]["state"]["startPayment"]>[0]>["customer"];

async function pay(customer: Customer) {
  const { session, delivery } = await stack().standin.state.startPayment({ test: true, customer });
  expect(delivery.status, delivery.body).toBe(200);
  return db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
}

async function shopifyWebhook(topic: string, payload: unknown): Promise<void> {
  const response = await sendShopifyWebhook(stack(), topic, payload);
  expect(response.status, `${topic} answered`).toBe(200);
}

it("a phone-only shopper is found by customers/data_request and customers/redact when Shopify writes the phone without the spaces typed at checkout", async () => {
  const payment = await pay({
    email: undefined,
    phone_number: "+34 611 222 333",
    billing_address: { given_name: "Pilar", family_name: "Spacedphone", line1: "Plaza Mayor 3", city: "Toledo", postal_code: "45001", country_code: "ES" },
  });
  expect(payment.customerPhone).toBe("+34611222333");
  const customer = { id: 503, email: null, phone: "+34611222333" };

  await shopifyWebhook("customers/data_request", { shop_domain: stack().shopDomain, customer, orders_requested: [] });
  const report = await db().customerDataRequest.findFirstOrThrow({ where: { customerPhone: customer.phone } });
  expect(report.paymentCount).toBe(1);
  expect(report.report).toContain("Spacedphone");

  await shopifyWebhook("customers/redact", { shop_domain: stack().shopDomain, customer, orders_to_redact: [] });
  const after = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect({ name: after.customerName, phone: after.customerPhone, address: after.billingAddress }).toEqual({ name: null, phone: null, address: null });
  expect(await db().customerDataRequest.count({ where: { id: report.id } })).toBe(0);
});

it("a payment keeps only the address fields the flows use, not the company or any other field Shopify sends", async () => {
  const payment = await pay({
    email: "minimal.store@example.com",
    billing_address: { given_name: "Mina", family_name: "Malstore", line1: "Calle Corta 5", city: "Bilbao", province_code: "BI", postal_code: "48001", country_code: "ES", company: "Malstore Consulting SL" },
  });
  expect(JSON.parse(payment.billingAddress!)).toEqual({ given_name: "Mina", family_name: "Malstore", line1: "Calle Corta 5", city: "Bilbao", postal_code: "48001", country_code: "ES" });
});

it("a checkout with a shipping address and no billing one (Shopify may leave any customer field out) names the shopper from the shipping address", async () => {
  const payment = await pay({
    email: "only.shipping@example.com",
    billing_address: {},
    shipping_address: { given_name: "Sol", family_name: "Envío", line1: "Calle Ancha 9", city: "Cádiz", postal_code: "11001", country_code: "ES" },
  });
  const sent = stack().standin.state.session(payment.shopifyPaymentId)!.request as { customer: Record<string, unknown> };
  expect(sent.customer).not.toHaveProperty("billing_address");
  expect(payment.customerName).toBe("Sol Envío");
  expect(JSON.parse(payment.billingAddress!)).toMatchObject({ line1: "Calle Ancha 9", city: "Cádiz" });
});

it("a checkout with no address at all is taken, the payment holding none", async () => {
  const payment = await pay({ email: "no.address@example.com", billing_address: {} });
  const sent = stack().standin.state.session(payment.shopifyPaymentId)!.request as { customer: Record<string, unknown> };
  expect(sent.customer).not.toHaveProperty("billing_address");
  expect(sent.customer).not.toHaveProperty("shipping_address");
  expect({ name: payment.customerName, address: payment.billingAddress }).toEqual({ name: null, address: null });
});
