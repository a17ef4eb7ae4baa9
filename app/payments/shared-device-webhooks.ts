// Flow 4, for shops that share a device: a merchant may connect one gateway device in two of
// their shops, but the gateway sends the device's notifications to the one notification URL set
// on it in its dashboard, so only one of the shops receives them. A notification that came to
// one shop's URL, verified there with its Secret Key, for an order that shop has no payment for
// but another installed shop has, is stored in that other shop's inbox and processed there
// exactly as if it had come to its own URL. Only when that shop's payment was made on the very
// device the notification came from (the shop's credentials in use, or the retired ones the
// payment began on: beganOnRetiredCredentials) and the Secret Key that shop holds for it signs the
// notification too: a notification never reaches a payment of a shop whose Secret Key did not
// sign it. Asked only for orders the receiving shop does not have, so the notifications of its
// own payments cost nothing more; everything else is left as it was.
import type { GatewayWebhook } from "../../generated/prisma/sqlite/client";
import { signatureMatches } from "~/gateway/webhook-signature";
import { beganOnRetiredCredentials, type RetirementColumns } from "~/shops/credential-columns";
import { shopGateway } from "~/shops/gateway-directory.server";
import type { GatewayEnv, PaymentsDeps, ShopCredentials, ShopGatewayAccess } from "./deps";
import { storeInInbox } from "./gateway-webhooks";

/** Why a notification for another shop's order was not passed on, as logged. */
type Refusal = "shop_not_installed" | "no_credentials" | "credentials_unreadable" | "another_device" | "another_secret_key";

/** Whether the Secret Key signed the stored notification (the nonce's age was checked when it came). */
function signs(access: ShopGatewayAccess, hook: GatewayWebhook): boolean {
  return signatureMatches({ secretHex: access.secretKeyHex, nonce: hook.nonce, signature: hook.signature, rawBody: hook.rawBody });
}

/**
 * Why the notification may not reach the owner's payment, or null when it may: the device the
 * payment's order was made on, as its own shop holds it, must be one of the receiving shop's
 * (`ownDevices`) whose Secret Key signed the notification, and a Secret Key the owner holds for
 * that device must sign it too: the pair the payment began on, or the owner's other pair when it
 * is the same device (a Secret Key renewed in the dashboard while the payment was in progress,
 * the old pair kept as retired: the gateway signs with the new one).
 */
function refusalOf(
  deps: PaymentsDeps,
  ownDevices: ShopGatewayAccess[],
  owner: ShopCredentials & RetirementColumns,
  env: GatewayEnv,
  payment: { createdAt: Date; orderRequestedAt: Date | null },
  hook: GatewayWebhook,
): Refusal | null {
  const began = beganOnRetiredCredentials(owner, env, payment) ? "retired" : "current";
  const theirs = shopGateway(deps.gateways, owner, env, began);
  if (theirs.state === "not_connected") return "no_credentials";
  if (theirs.state === "unreadable") return "credentials_unreadable";
  const device = theirs.access.deviceKeyHash;
  if (!ownDevices.some((own) => own.deviceKeyHash === device && signs(own, hook))) return "another_device";
  const other = shopGateway(deps.gateways, owner, env, began === "retired" ? "current" : "retired");
  const ownersPairs = [theirs.access, ...(other.state === "connected" && other.access.deviceKeyHash === device ? [other.access] : [])];
  return ownersPairs.some((pair) => signs(pair, hook)) ? null : "another_secret_key";
}

/**
 * Passes on to the shops whose payments have their orders the notifications `shop` received for
 * orders it has no payment for (`hooks`, of environment `env`), where the rules above allow; the
 * ids of those passed on. One query for the payments, one for their shops, and nothing when no
 * other shop has the orders.
 */
export async function passOnToPaymentShops(deps: PaymentsDeps, shop: ShopCredentials, env: GatewayEnv, hooks: GatewayWebhook[]): Promise<string[]> {
  const passedOn: string[] = [];
  const orderIds = [...new Set(hooks.map((hook) => hook.orderId).filter((id): id is string => id !== null))];
  if (orderIds.length === 0) return passedOn;
  const payments = await deps.db.payment.findMany({
    where: { gatewayEnv: env, gatewayOrderId: { in: orderIds }, shopId: { not: shop.id } },
    select: { shopId: true, gatewayOrderId: true, createdAt: true, orderRequestedAt: true },
  });
  if (payments.length === 0) return passedOn;
  const owners = new Map(
    (await deps.db.shop.findMany({ where: { id: { in: [...new Set(payments.map((p) => p.shopId))] }, uninstalledAt: null } })).map((owner) => [owner.id, owner]),
  );
  const byOrder = new Map(payments.map((payment) => [payment.gatewayOrderId!, payment]));
  // The receiving shop's devices of the environment: the one in use verified the notification at
  // the door, unless it was replaced since, when it is the retired one.
  const ownDevices = (["current", "retired"] as const).flatMap((slot) => {
    const gateway = shopGateway(deps.gateways, shop, env, slot);
    return gateway.state === "connected" ? [gateway.access] : [];
  });
  const now = deps.clock.now();
  for (const hook of hooks) {
    const payment = hook.orderId === null ? undefined : byOrder.get(hook.orderId);
    if (!payment) continue;
    const owner = owners.get(payment.shopId);
    const refusal = owner ? refusalOf(deps, ownDevices, owner, env, payment, hook) : "shop_not_installed";
    if (!owner || refusal !== null) {
      // Left to be handled as one for an order no shop has, so that the receiving shop, which
      // may sign a notification itself, learns nothing of which orders other shops have.
      deps.logger.warn("Gateway webhook for another shop's order not passed on to it", { shop: shop.shopDomain, webhookId: hook.id, reason: refusal });
      continue;
    }
    // As if it had come to the shop's own URL, when it reached the app. The shop's replay guard
    // stores a notification passed on twice (a pass that lost its claim, then another) once.
    const { nonce, signature, rawBody, orderId, status, receivedAt } = hook;
    await storeInInbox(deps, { shopId: owner.id, gatewayEnv: env, nonce, signature, rawBody, orderId, status, receivedAt }, now);
    passedOn.push(hook.id);
    deps.logger.info("Gateway webhook passed on to the shop whose payment has its order: both shops use the same device", {
      shop: shop.shopDomain,
      to: owner.shopDomain,
      webhookId: hook.id,
    });
  }
  if (passedOn.length > 0) deps.notify?.inbox();
  return passedOn;
}
