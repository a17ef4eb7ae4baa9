// SIGTERM (server/main.ts calls close()) while Shopify's payment session is being created at
// the gateway: the request is finished and answered, the order stored and the claim released,
// before the server's close() ends.
import { expect, it } from "vitest";
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
