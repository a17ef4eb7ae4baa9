// Two shops on one gateway device (a merchant's two stores, or two shops that both pasted the
// sandbox's demo key). The gateway order's reference is Shopify's payment id, which a payment
// of another shop may share (see test/payments/shops-and-privacy.test.ts). After a lost
// creation answer, the order found by that reference is adopted only when its internal_data
// does not name another payment: shop B never takes shop A's order.
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectGateway } from "../../app/shops/onboarding.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { sendPaymentSession, startStack, type Stack } from "../support/stack";

const OTHER_SHOP = "other-shop.myshopify.com";
let stack: Stack;
const logLines: string[] = [];

beforeAll(async () => {
  stack = await startStack({ logLines });
  // The other shop connects the very device the stack's shop uses.
  const shop = await stack.services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  const deviceKey = stack.services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"));
  const secretKeyHex = stack.services.cipher.decrypt(shop.sandboxSecretKeyEnc!, credentialContext(shop.id, "sandbox", "secret-key"));
  const connected = await connectGateway(stack.services, OTHER_SHOP, { env: "sandbox", deviceKey, secretKeyHex });
  if (!connected.ok) throw new Error(connected.message);
}, 60_000);

afterAll(async () => {
  await stack?.sandboxControl("/sandbox/faults", undefined, "DELETE").catch(() => undefined);
  await stack?.close();
});

const db = () => stack.services.db;

it("a lost order creation in shop B does not adopt shop A's order that carries the same reference", async () => {
  // Shop A's shopper starts paying; they choose a coin on the gateway's page.
  const session = stack.standin.state.createPaymentSession({ test: true });
  const post = (shop: string) => sendPaymentSession(stack, session.request, shop);
  const first = await post(stack.shopDomain);
  expect(first.status).toBe(200);
  await first.body?.cancel();
  const paymentA = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id, shop: { shopDomain: stack.shopDomain } } });
  await stack.sandboxControl(`/sandbox/orders/${paymentA.gatewayOrderId!}/actions`, { action: "choose_currency", currency: "ETH" });

  // Shop B's session under the same Shopify id: the gateway answers its order creation with a
  // 500 of its own (no order made), so the app looks the order up by its reference.
  await stack.sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_500", count: 1 });
  const second = await post(OTHER_SHOP);
  const secondBody = await second.text();
  await stack.sandboxControl("/sandbox/faults", undefined, "DELETE");

  const paymentB = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id, shop: { shopDomain: OTHER_SHOP } } });
  const adopted = await db().paymentEvent.findMany({ where: { paymentId: paymentB.id } });
  // What the app logged about it: the order it found by the reference, and why storing it failed.
  const logged = logLines.filter((line) => /looking it up by reference|Unique constraint|unique/i.test(line)).map((line) => line.slice(0, 300));
  // Expected: the 500 proved no order was made for shop B, so B gets an order of its own; never shop A's.
  expect(
    { status: second.status, orderIsShopAs: paymentB.gatewayOrderId === paymentA.gatewayOrderId },
    `shop B was answered ${second.status} ${secondBody.slice(0, 200)}; its events: ${adopted.map((e) => `${e.type} ${e.detail ?? ""}`).join(" | ")}; log: ${logged.join(" | ")}`,
  ).toEqual({ status: 200, orderIsShopAs: false });
  expect(paymentB.gatewayOrderId).not.toBeNull();
});
