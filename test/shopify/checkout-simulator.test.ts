// The checkout simulator against a tiny local app: the payment session it POSTs has the
// body and headers Shopify sends, the buyer follows the app's redirect, failures are shown
// and can be re-sent with the same id, and the order page and refund button work.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createPaymentsAppsClient } from "~/shopify/payments-apps";
import { startShopifyStandin, type ShopifyStandin } from "../../dev/shopify-standin/server";
import { startTinyApp, type TinyApp } from "./tiny-app";

// The offsite payment session request, as PAYMENTS_APPS.md describes it.
const addressSchema = z
  .object({
    given_name: z.string(),
    family_name: z.string(),
    line1: z.string(),
    line2: z.string(),
    city: z.string(),
    postal_code: z.string(),
    province: z.string(),
    province_code: z.string(),
    country_code: z.string().regex(/^[A-Z]{2}$/),
    phone_number: z.string(),
    company: z.string(),
  })
  .partial()
  .strict();

const paymentSessionRequestSchema = z
  .object({
    id: z.string().min(1),
    gid: z.string().regex(/^gid:\/\/shopify\/PaymentSession\/[A-Za-z0-9]+$/),
    group: z.string().min(1),
    session_id: z.string().min(1),
    amount: z.string().regex(/^\d+\.\d+$/),
    currency: z.string().regex(/^[A-Z]{3}$/),
    test: z.boolean(),
    merchant_locale: z.string().min(2),
    payment_method: z.object({ type: z.literal("offsite"), data: z.object({ cancel_url: z.string().url() }).strict() }).strict(),
    proposed_at: z.string().datetime(),
    kind: z.enum(["sale", "authorization"]),
    customer: z
      .object({
        email: z.string().email(),
        phone_number: z.string(),
        locale: z.string(),
        billing_address: addressSchema,
        shipping_address: addressSchema,
      })
      .partial()
      .strict(),
  })
  .strict();

const refundSessionRequestSchema = z
  .object({
    id: z.string().min(1),
    gid: z.string().regex(/^gid:\/\/shopify\/RefundSession\/[A-Za-z0-9]+$/),
    payment_id: z.string().min(1),
    amount: z.string().regex(/^\d+\.\d+$/),
    currency: z.string().regex(/^[A-Z]{3}$/),
    merchant_locale: z.string(),
    proposed_at: z.string().datetime(),
    test: z.boolean(),
  })
  .strict();

const shopifyHeadersSchema = z.object({
  "content-type": z.string().startsWith("application/json"),
  "shopify-shop-domain": z.literal("demo-shop.myshopify.com"),
  "shopify-request-id": z.string().uuid(),
  "shopify-api-version": z.literal("2026-04"),
});

let standin: ShopifyStandin;
let app: TinyApp;

beforeAll(async () => {
  app = await startTinyApp();
  standin = await startShopifyStandin({ appUrl: app.origin });
  app.connect({ endpoint: standin.graphqlEndpoint(), shopDomain: standin.shopDomain, accessToken: standin.accessToken });
});

afterAll(async () => {
  await standin.close();
  await app.close();
});

beforeEach(() => {
  app.mode = "redirect";
});

function checkoutForm(changes: Record<string, string | null> = {}): URLSearchParams {
  const fields: Record<string, string | null> = {
    amount: "120.5",
    currency: "USD",
    test: "on",
    locale: "en",
    kind: "sale",
    email: "sam.carter@example.com",
    phone_number: "+14155550123",
    billing_given_name: "Sam",
    billing_family_name: "Carter",
    billing_company: "",
    billing_line1: "500 Market St",
    billing_line2: "",
    billing_city: "San Francisco",
    billing_postal_code: "94105",
    billing_province: "California",
    billing_province_code: "CA",
    billing_country_code: "us",
    billing_phone_number: "",
    ...changes,
  };
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) if (value !== null) form.set(key, value);
  return form;
}

async function submitCheckout(form: URLSearchParams): Promise<Response> {
  return fetch(`${standin.origin}/checkout`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: form,
    redirect: "manual",
  });
}

function paymentRequests() {
  return app.received.filter((r) => r.method === "POST" && r.path === "/payments/session");
}

describe("the checkout simulator", () => {
  it("shows a checkout form prefilled with a demo customer", async () => {
    const response = await fetch(`${standin.origin}/checkout`);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('name="amount"');
    expect(page).toContain("<option selected>EUR</option>");
    expect(page).toContain('value="Lucía"');
    expect(page).toContain('name="viewport"');
    expect(await (await fetch(`${standin.origin}/`)).text()).toContain('href="/checkout"');
  });

  it("says when real Shopify would not offer the payment method: the app has not configured it, or said it is not ready", async () => {
    const checkout = async () => (await fetch(`${standin.origin}/checkout`)).text();
    const configure = (ready: boolean) =>
      createPaymentsAppsClient({ shopDomain: standin.shopDomain, accessToken: standin.accessToken, endpoint: standin.graphqlEndpoint() }).configurePaymentsApp({ externalHandle: "device", ready });
    const note = "Shopify would not offer this payment method now.";
    if (standin.state.configuration() === null) expect(await checkout()).toContain("The app has not configured the payments app yet");
    (await configure(false))._unsafeUnwrap();
    const notReady = await checkout();
    expect(notReady).toContain(note);
    expect(notReady).toContain("ready: false");
    (await configure(true))._unsafeUnwrap();
    expect(await checkout()).not.toContain(note);
  });

  it("posts a well-formed payment session to the app and sends the buyer to the app's redirect", async () => {
    const before = paymentRequests().length;
    const response = await submitCheckout(checkoutForm());
    expect(response.status).toBe(303);

    const sent = paymentRequests();
    expect(sent).toHaveLength(before + 1);
    const request = sent.at(-1)!;
    shopifyHeadersSchema.parse(request.headers);
    const body = paymentSessionRequestSchema.parse(request.body);
    expect(body).toMatchObject({
      amount: "120.50",
      currency: "USD",
      test: true,
      merchant_locale: "en",
      kind: "sale",
      gid: `gid://shopify/PaymentSession/${body.id}`,
      payment_method: { type: "offsite", data: { cancel_url: `${standin.origin}/checkout/cancelled/${body.id}` } },
      customer: {
        email: "sam.carter@example.com",
        billing_address: { given_name: "Sam", city: "San Francisco", country_code: "US", province_code: "CA" },
        shipping_address: { line1: "500 Market St" },
      },
    });
    // Empty customer fields are left out, as Shopify does.
    expect(body.customer.billing_address).not.toHaveProperty("company");

    const location = response.headers.get("location");
    expect(location).toBe(`${app.origin}/pay/${body.id}`);
    const paymentPage = await fetch(location!);
    expect(paymentPage.status).toBe(200);
    expect(app.received.at(-1)).toMatchObject({ method: "GET", path: `/pay/${body.id}` });

    expect(standin.state.session(body.id)).toMatchObject({ type: "payment", state: { code: "OPEN" }, deliveries: [{ outcome: "accepted", status: 200 }] });
  });

  it("sends test: false when test mode is off, and formats amounts with the currency's decimals", async () => {
    await submitCheckout(checkoutForm({ test: null, currency: "JPY", amount: "1500" }));
    const body = paymentSessionRequestSchema.parse(paymentRequests().at(-1)!.body);
    expect(body.test).toBe(false);
    expect(body.amount).toBe("1500.00");
    expect(body.currency).toBe("JPY");
  });

  it("refuses a malformed checkout with a reason and sends nothing", async () => {
    const before = paymentRequests().length;
    const sessionsBefore = standin.state.paymentSessions().length;
    const response = await submitCheckout(checkoutForm({ amount: "12,50" }));
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("amount must be a positive decimal number with a dot");
    expect(paymentRequests()).toHaveLength(before);
    expect(standin.state.paymentSessions()).toHaveLength(sessionsBefore);

    const tooPrecise = await submitCheckout(checkoutForm({ amount: "10.5", currency: "JPY" }));
    expect(tooPrecise.status).toBe(400);
    expect(await tooPrecise.text()).toContain("JPY amounts have at most 0 decimals");
  });

  it("shows the app's error answer, and sends the same session again on request", async () => {
    app.mode = "fail";
    const failed = await submitCheckout(checkoutForm());
    expect(failed.status).toBe(502);
    const page = await failed.text();
    expect(page).toContain("HTTP 500");
    expect(page).toContain("gateway unavailable");
    const first = paymentRequests().at(-1)!;
    const firstBody = paymentSessionRequestSchema.parse(first.body);

    app.mode = "redirect";
    const retried = await fetch(`${standin.origin}/checkout/sessions/${firstBody.id}/retry`, { method: "POST", redirect: "manual" });
    expect(retried.status).toBe(303);
    expect(retried.headers.get("location")).toBe(`${app.origin}/pay/${firstBody.id}`);
    const second = paymentRequests().at(-1)!;
    expect(second.body).toEqual(first.body);
    expect(second.headers["shopify-request-id"]).not.toBe(first.headers["shopify-request-id"]);
  });

  it("refuses an answer whose redirect_url is not an http(s) URL", async () => {
    app.mode = "bad_redirect";
    const response = await submitCheckout(checkoutForm());
    expect(response.status).toBe(502);
    expect(await response.text()).toContain("redirect_url must be an http(s) URL");
  });

  it("shows the page the cancel_url points to", async () => {
    await submitCheckout(checkoutForm());
    const body = paymentSessionRequestSchema.parse(paymentRequests().at(-1)!.body);
    const page = await fetch(body.payment_method.data.cancel_url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("You left the payment page");
  });
});

describe("the order page", () => {
  const client = () =>
    createPaymentsAppsClient({ shopDomain: standin.shopDomain, accessToken: standin.accessToken, endpoint: standin.graphqlEndpoint() });

  it("waits, then shows the order paid, and starts a refund session at the app", async () => {
    const { session } = await standin.state.startPayment({ amount: "80.00", currency: "EUR" });
    const waiting = await (await fetch(`${standin.origin}/orders/${session.id}`)).text();
    expect(waiting).toContain("Waiting for the payments app");
    expect(waiting).toContain('http-equiv="refresh"');

    const resolved = await client().resolvePaymentSession(session.gid);
    expect(resolved.isOk() && resolved.value.redirectUrl).toBe(`${standin.origin}/orders/${session.id}`);
    const paid = await (await fetch(`${standin.origin}/orders/${session.id}`)).text();
    expect(paid).toContain("Thank you! Your order is confirmed.");
    expect(paid).not.toContain('http-equiv="refresh"');
    expect(paid).toContain(`action="/orders/${session.id}/refunds"`);

    const refund = await fetch(`${standin.origin}/orders/${session.id}/refunds`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ amount: "30" }),
      redirect: "manual",
    });
    expect(refund.status).toBe(303);
    expect(refund.headers.get("location")).toBe(`/orders/${session.id}`);
    const refundRequest = app.received.filter((r) => r.path === "/payments/refund").at(-1)!;
    shopifyHeadersSchema.parse(refundRequest.headers);
    const refundBody = refundSessionRequestSchema.parse(refundRequest.body);
    expect(refundBody).toMatchObject({ payment_id: session.id, amount: "30.00", currency: "EUR", test: true });

    expect(await (await fetch(`${standin.origin}/orders/${session.id}`)).text()).toContain("processing");
    const refundResolved = await client().rejectRefundSession(refundBody.gid, { code: "PROCESSING_ERROR", merchantMessage: "Refund it from the gateway dashboard." });
    expect(refundResolved.isOk()).toBe(true);
    expect(await (await fetch(`${standin.origin}/orders/${session.id}`)).text()).toContain("Refund it from the gateway dashboard.");

    const tooMuch = await fetch(`${standin.origin}/orders/${session.id}/refunds`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ amount: "80.01" }),
      redirect: "manual",
    });
    expect(tooMuch.status).toBe(400);
    expect(await tooMuch.text()).toContain("At most 80.00 EUR can still be refunded");
  });

  it("shows a pending order, then a rejected one with its reason", async () => {
    const { session } = await standin.state.startPayment();
    await client().pendPaymentSession(session.gid, { pendingExpiresAt: new Date(Date.now() + 3_600_000), reason: "NETWORK_ACTION_REQUIRED" });
    const pending = await (await fetch(`${standin.origin}/orders/${session.id}`)).text();
    expect(pending).toContain("Payment pending");
    expect(pending).toContain("waiting for the payment network");

    await client().rejectPaymentSession(session.gid, { code: "CANCELLED_PAYMENT", merchantMessage: "The order expired on the gateway." });
    const rejected = await (await fetch(`${standin.origin}/orders/${session.id}`)).text();
    expect(rejected).toContain("Your payment could not be processed");
    expect(rejected).toContain("CANCELLED_PAYMENT");
    expect(rejected).toContain("The order expired on the gateway.");
    expect(rejected).not.toContain("/refunds");

    // The buyer tries again from the same checkout: a new session in the same group.
    expect(rejected).toContain(`href="/checkout?after=${session.id}"`);
    const again = await (await fetch(`${standin.origin}/checkout?after=${session.id}`)).text();
    expect(again).toContain(`name="after" value="${session.id}"`);
    expect(again).toContain(`value="${session.request.amount}"`);
    const retry = await submitCheckout(checkoutForm({ after: session.id }));
    expect(retry.status).toBe(303);
    const next = paymentSessionRequestSchema.parse(paymentRequests().at(-1)!.body);
    expect(next.id).not.toBe(session.id);
    expect(next.group).toBe(session.group);
  });

  it("captures or voids an authorization from the order page", async () => {
    const post = (path: string) => fetch(`${standin.origin}${path}`, { method: "POST", redirect: "manual" });
    const { session: authorized } = await standin.state.startPayment({ kind: "authorization" });
    await client().resolvePaymentSession(authorized.gid);
    const page = await (await fetch(`${standin.origin}/orders/${authorized.id}`)).text();
    expect(page).toContain("Authorized");
    expect(page).not.toContain("/refunds");

    expect((await post(`/orders/${authorized.id}/captures`)).status).toBe(303);
    const capture = app.received.filter((r) => r.path === "/payments/capture").at(-1)!;
    shopifyHeadersSchema.parse(capture.headers);
    expect(capture.body).toMatchObject({ gid: expect.stringMatching(/^gid:\/\/shopify\/CaptureSession\//), payment_id: authorized.id, amount: "49.90", currency: "EUR" });
    // One capture or void per authorization.
    expect((await post(`/orders/${authorized.id}/voids`)).status).toBe(400);

    const { session: other } = await standin.state.startPayment({ kind: "authorization" });
    await client().resolvePaymentSession(other.gid);
    expect((await post(`/orders/${other.id}/voids`)).status).toBe(303);
    const voidRequest = app.received.filter((r) => r.path === "/payments/void").at(-1)!;
    expect(voidRequest.body).toMatchObject({ gid: expect.stringMatching(/^gid:\/\/shopify\/VoidSession\//), payment_id: other.id });
    expect(voidRequest.body).not.toHaveProperty("amount");
  });

  it("escapes what the app and the buyer typed", async () => {
    const { session } = await standin.state.startPayment();
    await client().rejectPaymentSession(session.gid, { code: "PROCESSING_ERROR", merchantMessage: "<script>alert(1)</script>" });
    const page = await (await fetch(`${standin.origin}/orders/${session.id}`)).text();
    expect(page).not.toContain("<script>alert(1)</script>");
    expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  });

  it("answers 404 for an unknown order", async () => {
    expect((await fetch(`${standin.origin}/orders/nope`)).status).toBe(404);
  });

  it("only ever received schema-valid operations", () => {
    expect(standin.state.invalidOperations()).toEqual([]);
  });
});
