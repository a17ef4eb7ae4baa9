// Shutdown of an instance that terminates TLS itself (MTLS_MODE=direct) while a client holds a
// TCP connection open without finishing its TLS handshake, as port scanners do all day on an
// instance that faces the internet. Node closes only connections past their handshake; the
// server closes the others itself, so close() ends instead of waiting for their handshake to
// time out (two minutes), past the process manager's kill.
import type { IncomingMessage } from "node:http";
import https from "node:https";
import net from "node:net";
import { afterAll, expect, it } from "vitest";
import { STRICT_TRANSPORT_SECURITY } from "../../server/app";
import { createTestPki } from "./certificates";
import { stackForFile } from "../support/stack";

const pki = createTestPki();
afterAll(() => pki.remove());

const TLS_ENV = { MTLS_MODE: "direct", TLS_CERT_FILE: pki.server.certFile, TLS_KEY_FILE: pki.server.keyFile, MTLS_CA_FILE: pki.shopifyCa.certFile };
const stack = stackForFile({ workers: false, env: TLS_ENV });

it("close() ends, closing a connection whose TLS handshake never began", async () => {
  const { port } = new URL(stack().app.url);
  const silent = net.connect({ host: "127.0.0.1", port: Number(port) });
  await new Promise<void>((resolve, reject) => silent.once("connect", resolve).once("error", reject));
  const silentClosed = new Promise<void>((resolve) => silent.once("close", () => resolve()));

  await stack().app.close();
  await silentClosed;
  expect(silent.destroyed).toBe(true);

  // Started again, the app answers over TLS as before, and still refuses Shopify's routes to a
  // client without Shopify's certificate (a refusal it logs).
  await stack().restartApp({ workers: false });
  expect(await statusOverTls(stack().app.url, "GET", "/healthz")).toBe(200);
  expect(await statusOverTls(stack().app.url, "POST", "/payments/session")).toBe(403);
}, 20_000);

it("tells browsers to use HTTPS only on every answer of its own TLS: pages, the API and refusals", async () => {
  for (const [method, path] of [["GET", "/healthz"], ["GET", "/pay/unknown"], ["POST", "/payments/session"], ["GET", "/no-such-page"]] as const) {
    expect((await answerOverTls(stack().app.url, method, path)).headers["strict-transport-security"], `${method} ${path}`).toBe(STRICT_TRANSPORT_SECURITY);
  }
});

async function statusOverTls(url: string, method: string, path: string): Promise<number | undefined> {
  return (await answerOverTls(url, method, path)).statusCode;
}

function answerOverTls(url: string, method: string, path: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    https
      .request(`${url}${path}`, { method, rejectUnauthorized: false }, (response) => {
        response.resume();
        resolve(response);
      })
      .on("error", reject)
      .end();
  });
}
