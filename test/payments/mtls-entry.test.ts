// The server entry puts the mTLS guard in front of the routes Shopify calls (here in
// proxy mode: a TLS-terminating proxy verified Shopify's client certificate and says so).
import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { MTLS_MODE: "proxy", MTLS_PROXY_HEADER: "x-client-verify", MTLS_PROXY_HEADER_VALUE: "SUCCESS" } });

function postSession(extra: Record<string, string>) {
  const session = stack().standin.state.createPaymentSession({ test: true });
  return fetch(`${stack().app.url}/payments/session`, {
    method: "POST",
    headers: { "content-type": "application/json", "shopify-shop-domain": stack().shopDomain, "shopify-request-id": randomUUID(), "shopify-api-version": "2026-04", ...extra },
    body: JSON.stringify(session.request),
  });
}

it("refuses Shopify's routes without the proxy's verification, and serves them with it", async () => {
  const refused = await postSession({});
  expect(refused.status).toBe(403);
  expect(await refused.json()).toMatchObject({ error: "client_certificate_required" });
  expect(await stack().services.db.payment.count()).toBe(0);
  const forged = await postSession({ "x-client-verify": "FAILED:unknown ca" });
  expect(forged.status).toBe(403);
  const accepted = await postSession({ "x-client-verify": "SUCCESS" });
  expect(accepted.status).toBe(200);
  // The shopper's and the merchant's pages are not behind the guard.
  expect((await fetch(`${stack().app.url}/healthz`)).status).toBe(200);
});
