// The mTLS guard in front of Shopify's routes, on the real app server terminating TLS itself
// (MTLS_MODE=direct, as production runs it without a proxy): a client with no certificate
// must never reach the payment session handler, whatever request target it sends.
import { randomUUID } from "node:crypto";
import tls from "node:tls";
import { afterAll, expect, it } from "vitest";
import { createTestPki } from "./certificates";
import { stackForFile } from "../support/stack";

const pki = createTestPki();
afterAll(() => pki.remove());

const stack = stackForFile({
  workers: false,
  env: { MTLS_MODE: "direct", TLS_CERT_FILE: pki.server.certFile, TLS_KEY_FILE: pki.server.keyFile, MTLS_CA_FILE: pki.shopifyCa.certFile },
});

/** One raw HTTPS request, with no client certificate: the status line and body. */
function rawPost(target: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  const port = Number(new URL(stack().app.url).port);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, rejectUnauthorized: false }, () => {
      const lines = [`POST ${target} HTTP/1.1`, "Host: 127.0.0.1", "Connection: close", `Content-Length: ${Buffer.byteLength(body)}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
      socket.write(`${lines.join("\r\n")}\r\n\r\n${body}`);
    });
    let text = "";
    socket.on("data", (chunk) => (text += chunk.toString("utf8")));
    socket.on("error", reject);
    socket.on("close", () => resolve({ status: Number(text.split(" ", 2)[1]), body: text.split("\r\n\r\n").slice(1).join("\r\n\r\n") }));
  });
}

function sessionRequest() {
  const session = stack().standin.state.createPaymentSession({ test: true });
  const headers = { "content-type": "application/json", "shopify-shop-domain": stack().shopDomain, "shopify-request-id": randomUUID(), "shopify-api-version": "2026-04" };
  return { headers, body: JSON.stringify(session.request) };
}

it("refuses the payment session route to a client without a certificate (origin-form target)", async () => {
  const { headers, body } = sessionRequest();
  const answer = await rawPost("/payments/session", headers, body);
  expect(answer.status).toBe(403);
  expect(await stack().services.db.payment.count()).toBe(0);
});

it.each(["http://127.0.0.1:99999/payments/session", "http://x:65536/PAYMENTS/Session/"])(
  "refuses it too when the target is absolute-form, with a port WHATWG URL refuses and the router takes (%s)",
  async (target) => {
    const { headers, body } = sessionRequest();
    const answer = await rawPost(target, headers, body);
    // Express's router (url.parse) reads this target as /payments/session while the guard's
    // new URL() throws and it compares "/HTTP:/HOST:99999/PAYMENTS/SESSION" instead.
    expect({ status: answer.status, payments: await stack().services.db.payment.count() }).toEqual({ status: 403, payments: 0 });
  },
);
