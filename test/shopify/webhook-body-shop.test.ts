// Shopify's webhooks name their shop twice: in the unsigned X-Shopify-Shop-Domain header, and
// in the body (privacy webhooks' shop_domain, app/uninstalled's myshopify_domain), which the
// HMAC covers. A body Shopify signed about one shop, replayed under another shop's header, is
// refused (400) and acts on neither: no other shop's customers erased, no other shop deleted.
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectSandbox } from "../../app/shops/onboarding.server";
import { paymentColumns } from "../support/payment-rows";
import { sendShopifyWebhook } from "../support/shopify-webhooks";
import { startStack, type Stack } from "../support/stack";

/** The shop whose signed webhooks are replayed (its own body, its own HMAC). */
const SIGNED_FOR = "signed-for-shop.myshopify.com";
/** The shop the unsigned header names instead. */
const VICTIM = "victim-shop.myshopify.com";

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
  for (const shop of [SIGNED_FOR, VICTIM]) {
    const connected = await connectSandbox(stack.services, shop);
    if (!connected.ok) throw new Error(connected.message);
  }
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

const db = () => stack.services.db;

it("customers/redact whose signed body is about shop A erases nothing of shop B when only the unsigned header names B", async () => {
  const email = "shared.customer@example.com";
  const victim = await db().shop.findUniqueOrThrow({ where: { shopDomain: VICTIM } });
  const payment = await db().payment.create({ data: paymentColumns(victim.id, { customerEmail: email, customerName: "Kept Name" }) });

  // The body (and so its HMAC) is Shopify's erasure request for SIGNED_FOR's customer.
  const body = { shop_id: 101, shop_domain: SIGNED_FOR, customer: { id: 5, email, phone: null }, orders_to_redact: [] };
  const response = await sendShopifyWebhook(stack, "customers/redact", body, { shop: VICTIM });
  expect({ status: response.status, error: ((await response.json()) as { error?: string }).error }).toEqual({ status: 400, error: "shop_mismatch" });

  const after = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect({ email: after.customerEmail, name: after.customerName }).toEqual({ email, name: "Kept Name" });
});

it("shop/redact whose signed body is about shop A does not delete shop B when only the unsigned header names B", async () => {
  // An established shop: installed three days ago (as nearly every shop is), still installed.
  await db().shop.update({ where: { shopDomain: VICTIM }, data: { installedAt: new Date(Date.now() - 3 * 86_400_000) } });
  const victim = await db().shop.findUniqueOrThrow({ where: { shopDomain: VICTIM } });
  await db().payment.create({ data: paymentColumns(victim.id) });

  // The body (and its HMAC) is SIGNED_FOR's own shop/redact.
  const response = await sendShopifyWebhook(stack, "shop/redact", { shop_id: 101, shop_domain: SIGNED_FOR }, { shop: VICTIM });
  expect(response.status).toBe(400);
  await response.body?.cancel();

  const still = await db().shop.findUnique({ where: { shopDomain: VICTIM } });
  expect(still?.id, "the victim shop's row was deleted by a shop/redact signed about another shop").toBe(victim.id);
  expect(await db().payment.count({ where: { shopId: victim.id } })).toBeGreaterThan(0);
});

it("app/uninstalled whose signed shop object is shop A leaves shop B installed when only the unsigned header names B", async () => {
  const victim = await db().shop.findUniqueOrThrow({ where: { shopDomain: VICTIM } });
  expect(victim.uninstalledAt).toBeNull();
  const response = await sendShopifyWebhook(stack, "app/uninstalled", { id: 101, name: "Signed for", domain: "signed-for.example.com", myshopify_domain: SIGNED_FOR }, { shop: VICTIM });
  expect(response.status).toBe(400);
  await response.body?.cancel();
  expect(await db().shop.findUniqueOrThrow({ where: { shopDomain: VICTIM } })).toMatchObject({ uninstalledAt: null });

  // The same body under its own shop's header is taken.
  const own = await sendShopifyWebhook(stack, "app/uninstalled", { id: 101, name: "Signed for", domain: "signed-for.example.com", myshopify_domain: SIGNED_FOR }, { shop: SIGNED_FOR });
  expect(own.status).toBe(200);
  await own.body?.cancel();
});
