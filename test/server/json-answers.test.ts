// The app's JSON answers carry their length, so that the server's compression skips the
// short ones (Shopify's and the gateway's clients ask for gzip) and still compresses pages.
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });

it("answers a payment session and the health check uncompressed, with their length, to a client that accepts gzip", async () => {
  const session = stack().standin.state.createPaymentSession({ test: true });
  const answers = [
    await fetch(`${stack().app.url}/payments/session`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "accept-encoding": "gzip, deflate",
        "shopify-shop-domain": stack().shopDomain,
        "shopify-request-id": randomUUID(),
        "shopify-api-version": "2026-04",
      },
      body: JSON.stringify(session.request),
    }),
    await fetch(`${stack().app.url}/healthz`, { headers: { "accept-encoding": "gzip, deflate" } }),
  ];
  for (const answer of answers) {
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-encoding")).toBeNull();
    const text = await answer.text();
    expect(answer.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
  }
});

it("still compresses a page", async () => {
  const page = await fetch(`${stack().app.url}/`, { headers: { "accept-encoding": "gzip, deflate" } });
  expect(page.status).toBe(200);
  expect(page.headers.get("content-encoding")).toBe("gzip");
  expect(await page.text()).toContain("<html");
});
