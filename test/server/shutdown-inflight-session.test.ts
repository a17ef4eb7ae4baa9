// SIGTERM (server/main.ts calls close()) while Shopify's payment session is being created at
// the gateway: the request is finished and answered, the order stored and the claim released,
// before the server's close() ends. So is a session answered "in progress" (Shopify stopped
// waiting) whose order was still being made.
import { expect, it } from "vitest";
import { paymentSessionRequestSchema } from "../../app/payments/shopify-requests";
import { startPaymentSession } from "../../app/payments/start-payment-session";
import { sendPaymentSession, stackForFile, waitFor } from "../support/stack";

let delayOrdersMs = 0;
let ordersStarted = 0;
const realFetch = globalThis.fetch;
globalThis.fetch = (async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  const method = init?.method ?? (input instanceof Request ? input.method : "GET");
  if (delayOrdersMs > 0 && method === "POST" && /\/api\/v1\/orders\/?$/.test(new URL(url).pathname)) {
    ordersStarted++;
    await new Promise((resolve) => setTimeout(resolve, delayOrdersMs));
  }
  return realFetch(input, init);
}) as typeof fetch;

const stack = stackForFile({ workers: false, env: { SHUTDOWN_GRACE_MS: "0" } });

it("a payment session under way at the gateway is finished and answered while the instance stops", async () => {
  const session = stack().standin.state.createPaymentSession({ test: true });
  delayOrdersMs = 3_000;
  const answer = sendPaymentSession(stack(), session.request);
  await waitFor(async () => ordersStarted > 0, "the order sent to the gateway");
  const closing = stack().restartApp({ workers: false });
  const response = await answer;
  const text = await response.text();
  await closing;
  delayOrdersMs = 0;
  expect(response.status, text).toBe(200);
  const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  expect(payment.gatewayOrderId).not.toBeNull();
  expect(payment.sessionClaimToken).toBeNull();
});

it("a payment session answered 'in progress' while its order was still being made is finished before the instance's close() ends", async () => {
  const session = stack().standin.state.createPaymentSession({ test: true });
  const request = paymentSessionRequestSchema.parse(session.request);
  delayOrdersMs = 3_000;
  const started = ordersStarted;
  // Shopify stopped waiting: it was asked to retry while the order goes on being made. The wait
  // is well short of the order's 3 s, and long enough for the order to be sent first on a loaded
  // machine (100 ms was not, once, with the rest of the suite running beside it).
  const answer = await startPaymentSession(stack().services, { shopDomain: stack().shopDomain, request }, { answerWithinMs: 1_000 });
  expect(answer).toMatchObject({ status: 503, body: { error: "in_progress" } });
  expect(ordersStarted).toBe(started + 1);
  await stack().restartApp({ workers: false });
  delayOrdersMs = 0;
  // The order was stored and the claim released before the database was closed under it.
  const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  expect(payment.gatewayOrderId).not.toBeNull();
  expect(payment.sessionClaimToken).toBeNull();
  // Shopify's retry, on the instance started again, gets the order.
  const retried = await stack().standin.state.redeliverPayment(session.id);
  expect(retried.delivery.status, retried.delivery.body).toBe(200);
});
