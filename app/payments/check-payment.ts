// "Check now": reads one payment's order from the gateway at once, settles it and
// delivers any Shopify call it produced. Used by the admin and the app's payment page.
import type { GatewayEnv, PaymentsDeps } from "./deps";
import { deliverNow } from "./outbox";
import { settleFromGatewayOrder } from "./settle-payment";
import { shopGateway } from "~/shops/gateway-directory.server";

export type CheckResult = { ok: true; state: string; gatewayStatus: string | null } | { ok: false; reason: "not_found" | "no_order" | "no_credentials" | "gateway_error"; message: string };

export async function checkPaymentNow(deps: PaymentsDeps, shopId: string, paymentId: string): Promise<CheckResult> {
  const payment = await deps.db.payment.findFirst({ where: { id: paymentId, shopId }, include: { shop: true } });
  if (!payment) return { ok: false, reason: "not_found", message: "No such payment in this shop." };
  if (!payment.gatewayOrderId) return { ok: false, reason: "no_order", message: "This payment has no gateway order yet." };
  const gateway = shopGateway(deps.gateways, payment.shop, payment.gatewayEnv as GatewayEnv);
  if (gateway.state === "not_connected") return { ok: false, reason: "no_credentials", message: "The shop has no gateway credentials for this payment's environment." };
  if (gateway.state === "unreadable") return { ok: false, reason: "no_credentials", message: "The stored gateway credentials for this payment's environment cannot be read: connect the device again." };
  const { access } = gateway;
  const readAt = deps.clock.now();
  const read = await access.client.orderInfo(payment.gatewayOrderId);
  if (read.isErr()) return { ok: false, reason: "gateway_error", message: `The gateway could not be read (${read.error.kind}).` };
  const settled = await settleFromGatewayOrder(deps, payment.id, read.value, "check", readAt);
  if (settled.finalMessage) await deliverNow(deps, settled.finalMessage.id);
  return { ok: true, state: settled.payment.state, gatewayStatus: settled.payment.gatewayStatus };
}
