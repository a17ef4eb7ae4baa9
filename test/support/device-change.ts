// What the tests of a device change (a device removed or replaced while payments on it are in
// progress) do with a stack: start a payment on the sandbox, have the shopper pay, create a
// dedicated device as the connection page has the merchant do, send a notification signed
// with a given Secret Key, and read the shop's row and credentials.
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import { createDedicatedDevice, notificationUrl } from "../../app/shops/onboarding.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { sendGatewayWebhook, type Stack } from "./stack";

export function deviceChangeSteps(stack: () => Stack, clock: { now(): Date } = { now: () => new Date() }) {
  const db = () => stack().services.db;
  const shopRow = () => db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  const act = (orderId: string, body: Record<string, string>) => stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, body);

  return {
    db,
    shopRow,
    act,

    /** A test payment whose shopper picked BTC on the sandbox's page: awaiting payment. */
    async pendingPayment() {
      const { session } = await stack().standin.state.startPayment({ test: true });
      const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
      await act(payment.gatewayOrderId!, { action: "choose_currency", currency: "BTC" });
      return { session, payment, orderId: payment.gatewayOrderId! };
    },

    async shopperPays(orderId: string): Promise<void> {
      await act(orderId, { action: "pay", amount: "exact" });
      await act(orderId, { action: "confirm" });
    },

    async drainInbox(): Promise<void> {
      while ((await processWebhookInbox(stack().services, { worker: "t" })).processed > 0);
    },

    /** A new device of the same sandbox merchant, made as the connection page has the merchant do: its notifications come here, signed with its own Secret Key. */
    async dedicatedDevice() {
      const created = await createDedicatedDevice(stack().services, stack().shopDomain, "sandbox", "Replacement");
      if (!created.ok) throw new Error(`no device created: ${created.message}`);
      const settings = { regenerate_secret: true, notification_url: notificationUrl(stack().app.url, await shopRow()) };
      const device = (await stack().sandboxControl(`/sandbox/devices/${created.device.identifier}/settings`, settings)) as { secret_key: string };
      return { deviceKey: created.device.identifier, secretKeyHex: device.secret_key };
    },

    /** Posts `body` to the shop's notification URL signed with `secretHex`, as the gateway sends it; the door's status. */
    sendSigned(secretHex: string, body: string): Promise<number> {
      return sendGatewayWebhook(stack(), secretHex, body, clock.now());
    },

    /** The body of a "completed" notification of the payment's order, as the gateway writes it. */
    completedBody(payment: { gatewayOrderId: string | null; amount: string; currency: string }): string {
      return `{"identifier": "${payment.gatewayOrderId}", "status": "CO", "fiat_amount": ${payment.amount}, "fiat_currency": "${payment.currency}"}`;
    },

    /** The sandbox credentials the shop holds now, opened. */
    async currentSandboxCredentials() {
      const shop = await shopRow();
      const open = (sealed: string | null, field: "device-key" | "secret-key") => stack().services.cipher.decrypt(sealed!, credentialContext(shop.id, "sandbox", field));
      return { deviceKey: open(shop.sandboxDeviceKeyEnc, "device-key"), secretKeyHex: open(shop.sandboxSecretKeyEnc, "secret-key") };
    },
  };
}
