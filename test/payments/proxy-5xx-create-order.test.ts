// A 5xx that something in front of the gateway answers after it forwarded a POST /orders/
// (Cloudflare's 524, origin still working; its 520, connection reset after the request; a 503
// from a router's timeout or an upstream reset) says nothing of whether the gateway made the
// order. Handled as a 502, 504 or timeout is: 503 to Shopify, the request's time kept, the order
// looked up by reference only once it could have appeared, and one order in all. Taken for the
// gateway's own failure, the lookup made at once found nothing yet and a second order was sent.
import { expect, it } from "vitest";
import { paymentSessionRequestSchema } from "../../app/payments/shopify-requests";
import { startPaymentSession } from "../../app/payments/start-payment-session";
import { createServices, type AppServices } from "../../app/services.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { stackForFile } from "../support/stack";

const stack = stackForFile();

/** The app's services on the stack's database, with another gateway fetch. */
function instance(fetchFn: typeof fetch): AppServices {
  const base = stack().services;
  return createServices(base.env, { db: base.db, sql: base.sql, logger: stack().logger, fetch: fetchFn });
}

const isOrderCreation = (input: Parameters<typeof fetch>[0], init?: RequestInit) => init?.method === "POST" && String(input).endsWith("/orders/");

async function ordersWithReference(reference: string): Promise<number> {
  const shop = await stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  const key = stack().services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"));
  const response = await fetch(`${stack().sandbox.baseUrl}/orders/`, { headers: { "X-Device-Id": key } });
  const orders = (await response.json()) as { reference: string | null }[];
  return orders.filter((o) => o.reference === reference).length;
}

it.each([
  [524, "<html><title>524: A timeout occurred</title>cloudflare</html>"],
  [520, "<html><title>520: Web server is returning an unknown error</title>cloudflare</html>"],
  [503, "upstream connect error or disconnect/reset before headers. reset reason: connection termination"],
])("a %s from the proxy while the gateway is still creating the order does not lead to a second order", async (status, page) => {
  // The first POST reaches the gateway, which is still working on it when the proxy in front
  // answers `status`; the gateway finishes it afterwards.
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let late: Promise<Response> | null = null;
  let posts = 0;
  const proxied: typeof fetch = async (input, init) => {
    if (isOrderCreation(input, init) && ++posts === 1) {
      const { signal: _signal, ...rest } = init!;
      late = released.then(() => fetch(input, rest));
      return new Response(page, { status, headers: { "Content-Type": "text/html" } });
    }
    return fetch(input, init);
  };
  const session = stack().standin.state.createPaymentSession({ test: true });
  const request = paymentSessionRequestSchema.parse(session.request);

  const answer = await startPaymentSession(instance(proxied), { shopDomain: stack().shopDomain, request });
  release();
  expect((await late!)?.status).toBe(200);

  // Actual: posts === 2 and two gateway orders carry this payment's reference.
  expect(posts, `the app sent ${posts} POST /orders/ for one payment (answer ${answer.status})`).toBe(1);
  expect(await ordersWithReference(request.id)).toBe(1);
}, 60_000);
