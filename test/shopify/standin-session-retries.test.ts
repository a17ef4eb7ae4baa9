// The Shopify stand-in sends a payment session as Shopify's checkout does: when the app answers
// with a non-2xx (its own 503 "retry shortly": a duplicate still in progress, the gateway
// unreachable), the same session is sent again after the wait the app asks for, and the buyer
// goes on once it is answered. Tests that want each answer send once (startPayment's default).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startShopifyStandin, type ShopifyStandin } from "../../dev/shopify-standin/server";

describe("the stand-in's payment session delivery", () => {
  let server: Server;
  let standin: ShopifyStandin;
  let origin = "";
  const answered: number[] = [];

  beforeAll(async () => {
    // An app that is briefly unavailable: 503 with Retry-After to the first request of each
    // session id, the redirect to every later one.
    const seen = new Set<string>();
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: string };
        if (!seen.has(body.id)) {
          seen.add(body.id);
          answered.push(503);
          res.writeHead(503, { "content-type": "application/json", "retry-after": "1" });
          res.end(JSON.stringify({ error: "in_progress", message: "retry shortly" }));
          return;
        }
        answered.push(200);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ redirect_url: `${origin}/pay/${body.id}` }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    standin = await startShopifyStandin({ port: 0, host: "127.0.0.1", appUrl: origin });
  });

  afterAll(async () => {
    await standin?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("retries a session the app answered 503, as Shopify does, and sends the buyer on once it is answered", async () => {
    const { session, delivery } = await standin.state.startPayment(undefined, { retries: true });
    expect({ outcome: delivery.outcome, deliveries: standin.state.session(session.id)!.deliveries.length, answered }).toEqual({
      outcome: "accepted",
      deliveries: 2,
      answered: [503, 200],
    });
  }, 30_000);

  it("sends once when asked to, and the checkout page retries as Shopify does", async () => {
    answered.length = 0;
    const once = await standin.state.startPayment();
    expect({ outcome: once.delivery.outcome, status: once.delivery.status, retryAfterSeconds: once.delivery.retryAfterSeconds }).toEqual({ outcome: "refused", status: 503, retryAfterSeconds: 1 });

    const page = await fetch(`${standin.origin}/checkout`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ amount: "10.00", currency: "EUR", locale: "en", test: "on", email: "buyer@example.com" }).toString(), redirect: "manual" });
    await page.body?.cancel();
    expect({ status: page.status, location: page.headers.get("location")?.startsWith(origin) }).toEqual({ status: 303, location: true });
    expect(answered).toEqual([503, 503, 200]);
  }, 30_000);
});
