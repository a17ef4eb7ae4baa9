// A gateway whose clock runs ahead of the app's: its notifications' nonces are dated in the
// future. The door takes them up to WEBHOOK_MAX_NONCE_LEAD_SECONDS ahead (5 s unless set),
// since the gateway sends each notification once and a refused one is lost until a read.
import { expect, it } from "vitest";
import { parseEnv } from "../../app/config/env.server";
import { signWebhook } from "../../app/gateway/webhook-signature";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { WEBHOOK_MAX_NONCE_LEAD_SECONDS: "60" } });
const db = () => stack().services.db;

it("WEBHOOK_MAX_NONCE_LEAD_SECONDS is 5 unless set, and at most an hour", () => {
  expect(parseEnv({}).WEBHOOK_MAX_NONCE_LEAD_SECONDS).toBe(5);
  expect(parseEnv({ WEBHOOK_MAX_NONCE_LEAD_SECONDS: "0" }).WEBHOOK_MAX_NONCE_LEAD_SECONDS).toBe(0);
  expect(() => parseEnv({ WEBHOOK_MAX_NONCE_LEAD_SECONDS: "3601" })).toThrow(/WEBHOOK_MAX_NONCE_LEAD_SECONDS/);
  expect(() => parseEnv({ WEBHOOK_MAX_NONCE_LEAD_SECONDS: "-1" })).toThrow(/WEBHOOK_MAX_NONCE_LEAD_SECONDS/);
});

it("with the lead set to a minute, a notification dated 30 s ahead is taken and one dated 90 s ahead refused as from the future", async () => {
  const { session } = await stack().standin.state.startPayment({ test: true });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  const secretHex = stack().services.cipher.decrypt(shop.sandboxSecretKeyEnc!, credentialContext(shop.id, "sandbox", "secret-key"));
  const send = async (status: string, leadSeconds: number) => {
    const body = `{"fiat_amount": 49.9, "status": "${status}", "identifier": "${payment.gatewayOrderId}"}`;
    const nonce = String(Math.floor(Date.now() / 1000) + leadSeconds);
    const response = await fetch(`${stack().app.url}/gateway/webhooks/${shop.webhookToken}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-nonce": nonce, "x-signature": signWebhook({ secretHex, nonce, rawBody: body }) },
      body,
    });
    return { status: response.status, body: (await response.json()) as unknown };
  };
  expect(await send("PE", 30)).toMatchObject({ status: 200 });
  expect(await send("AC", 90)).toEqual({ status: 401, body: { error: "future_nonce" } });
  expect(await db().gatewayWebhook.findMany({ where: { orderId: payment.gatewayOrderId }, select: { status: true } })).toEqual([{ status: "PE" }]);
});
