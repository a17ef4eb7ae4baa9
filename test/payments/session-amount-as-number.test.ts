// Shopify sends a session's amount as a decimal string. One sent as a JSON
// number (a float: 49.9, 0.1 + 0.2) is malformed: answered 400 with a reason naming the
// field, and nothing is stored, on its own (every other field valid) for each route that
// takes an amount.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { sendPaymentSession, stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });
const db = () => stack().services.db;
beforeAll(() => stack().logger.info("session amounts as JSON numbers: started"));

async function storedRows() {
  const [payments, requests, outbox, events] = await Promise.all([db().payment.count(), db().sessionRequest.count(), db().outboxMessage.count(), db().paymentEvent.count()]);
  return { payments, requests, outbox, events };
}

describe("a payment session whose amount is a JSON number", () => {
  it.each([49.9, 0.1 + 0.2, 5000, 10.005])("%s is refused with a 400 naming the amount, and nothing is stored", async (amount) => {
    const before = await storedRows();
    const session = stack().standin.state.createPaymentSession({ test: true, amount: "49.90", currency: "EUR" });
    const response = await sendPaymentSession(stack(), { ...session.request, id: randomUUID(), amount });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error?: string; message?: string; fields?: Record<string, string> };
    expect(body.error).toBe("invalid_payment_session");
    expect(body.message).toBeTruthy();
    expect(Object.keys(body.fields ?? {})).toContain("amount");
    expect(await storedRows()).toEqual(before);
  });

  it("the same session with its amount as a string is taken (the refusal is the amount's alone)", async () => {
    const session = stack().standin.state.createPaymentSession({ test: true, amount: "49.90", currency: "EUR" });
    const response = await sendPaymentSession(stack(), session.request);
    expect(response.status).toBe(200);
  });
});

describe("a follow-up session whose amount is a JSON number", () => {
  const gidKind = { refund: "RefundSession", capture: "CaptureSession", void: "VoidSession" } as const;
  const post = (kind: keyof typeof gidKind, body: unknown) =>
    fetch(`${stack().app.url}/payments/${kind}`, {
      method: "POST",
      headers: { "content-type": "application/json", "shopify-shop-domain": stack().shopDomain, "shopify-request-id": randomUUID(), "shopify-api-version": "2026-04" },
      body: JSON.stringify(body),
    });

  it.each(["refund", "capture", "void"] as const)("/payments/%s refuses it with a 400 naming the amount, storing nothing; as a string it is taken", async (kind) => {
    const { session } = await stack().standin.state.startPayment({ test: true, kind: "authorization", amount: "49.90", currency: "EUR" });
    const before = await storedRows();
    const request = { id: randomUUID(), gid: `gid://shopify/${gidKind[kind]}/${randomUUID()}`, payment_id: session.id, currency: "EUR", proposed_at: new Date().toISOString(), test: true };
    const refused = await post(kind, { ...request, amount: 49.9 });
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { error?: string; message?: string; fields?: Record<string, string> };
    expect(body.error).toBe(`invalid_${kind}_session`);
    expect(body.message).toBeTruthy();
    expect(Object.keys(body.fields ?? {})).toContain("amount");
    expect(await storedRows()).toEqual(before);
    // The same request with the amount as Shopify writes it is a valid one.
    const taken = await post(kind, { ...request, amount: "49.90" });
    expect(taken.status).toBe(201);
  });
});
