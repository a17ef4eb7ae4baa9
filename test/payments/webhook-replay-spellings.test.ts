// A captured gateway notification sent again under another spelling of its X-SIGNATURE: padded
// with a no-break space (byte 0xA0, which HTTP keeps in a header's value and JavaScript's trim
// removes), or in upper-case hex. Each is the same notification: refused, and stored once. Over
// raw HTTP, so the header's bytes arrive as a sender wrote them.
import { request } from "node:http";
import { expect, it } from "vitest";
import { signWebhook } from "../../app/gateway/webhook-signature";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });
const db = () => stack().services.db;

/** POSTs with Node's own client, which sends a header value's latin1 characters as bytes. */
function post(url: string, body: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers: { "content-type": "application/json", ...headers } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    // A Buffer body: Node writes the header block as latin1 then (with a string body it
    // would encode the header block as UTF-8 along with it).
    req.end(Buffer.from(body, "utf8"));
  });
}

it("a replay of a signed notification is refused however its X-SIGNATURE is spelled, and stored once", async () => {
  const { session } = await stack().standin.state.startPayment({ test: true });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  const orderId = payment.gatewayOrderId!;
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  const secretHex = stack().services.cipher.decrypt(shop.sandboxSecretKeyEnc!, credentialContext(shop.id, "sandbox", "secret-key"));
  const url = `${stack().app.url}/gateway/webhooks/${shop.webhookToken}`;

  const body = `{"fiat_amount": 49.9, "status": "AC", "identifier": "${orderId}"}`;
  const nonce = String(Math.floor(Date.now() / 1000));
  const signature = signWebhook({ secretHex, nonce, rawBody: body });

  expect(await post(url, body, { "x-nonce": nonce, "x-signature": signature })).toBe(200);
  // The plain replay is refused, as it should be.
  expect(await post(url, body, { "x-nonce": nonce, "x-signature": signature })).toBe(409);
  // Padded: not a signature at all (401, malformed); in upper case: the same signature, a replay (409).
  const padded = [`${signature}\u00a0`, `\u00a0${signature}`, `${signature}\u00a0\u00a0`];
  const answers = [];
  for (const value of padded) answers.push(await post(url, body, { "x-nonce": nonce, "x-signature": value }));
  answers.push(await post(url, body, { "x-nonce": nonce, "x-signature": signature.toUpperCase() }));
  const stored = await db().gatewayWebhook.count({ where: { orderId } });
  expect({ answers, stored }).toEqual({ answers: [401, 401, 401, 409], stored: 1 });
});
