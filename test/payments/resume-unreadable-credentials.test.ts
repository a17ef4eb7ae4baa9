// A session whose first attempt stored no answer (the gateway was busy: 503, nothing created),
// resumed by Shopify's retry after the shop's credentials became unreadable (sealed under a key
// the app no longer holds), is answered as a new session would be: 503
// gateway_credentials_unreadable with a Retry-After, its claim released, nothing stored.
import { expect, it, onTestFinished } from "vitest";
import { stackForFile } from "../support/stack";

// One attempt per call: the first delivery's 429 is answered at once.
const stack = stackForFile({ gatewayRetry: { maxAttempts: 1 } });
const db = () => stack().services.db;

/** The sealed values name a key id the app does not have, as after the key was dropped; the returned function puts them back. */
async function sealUnderLostKey(): Promise<() => Promise<void>> {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  const underLostKey = (sealed: string) => sealed.split(":").map((part, i) => (i === 1 ? "lost" : part)).join(":");
  await db().shop.update({
    where: { id: shop.id },
    data: { sandboxDeviceKeyEnc: underLostKey(shop.sandboxDeviceKeyEnc!), sandboxSecretKeyEnc: underLostKey(shop.sandboxSecretKeyEnc!) },
  });
  return async () => {
    await db().shop.update({ where: { id: shop.id }, data: { sandboxDeviceKeyEnc: shop.sandboxDeviceKeyEnc, sandboxSecretKeyEnc: shop.sandboxSecretKeyEnc } });
  };
}

it("a retried session whose first attempt stored no answer is refused like a new one (503 gateway_credentials_unreadable), not answered 500, once the credentials cannot be read", async () => {
  await stack().sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_429", count: 1 });
  const { session, delivery } = await stack().standin.state.startPayment({ test: true });
  expect(delivery.status, delivery.body).toBe(503);
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  expect(payment).toMatchObject({ responseStatus: null, sessionClaimToken: null, orderRequestedAt: null });

  const restore = await sealUnderLostKey();
  onTestFinished(restore);
  const fresh = await stack().standin.state.startPayment({ test: true });
  expect(fresh.delivery.status).toBe(503);
  expect(JSON.parse(fresh.delivery.body)).toMatchObject({ error: "gateway_credentials_unreadable" });

  const again = await stack().standin.state.redeliverPayment(session.id);
  expect(again.delivery.body).not.toContain("internal_error");
  expect(again.delivery.status).toBe(503);
  expect(JSON.parse(again.delivery.body)).toMatchObject({ error: "gateway_credentials_unreadable" });
  // Nothing holds the payment: Shopify's next retry is not kept waiting for a claim no request works under.
  expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).sessionClaimToken).toBeNull();
}, 60_000);
