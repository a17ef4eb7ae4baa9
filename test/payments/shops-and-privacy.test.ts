// Multi-shop isolation and Shopify's app and privacy webhooks (verified by their HMAC alone,
// whatever the state of the shop's offline token), through the real routes.
import { createHmac, randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { signWebhook } from "../../app/gateway/webhook-signature";
import { reconcileOnce } from "../../app/payments/reconcile";
import { connectSandbox } from "../../app/shops/onboarding.server";
import { offlineSessionId } from "../../app/shops/shopify-directory.server";
import { listCustomerDataRequests, takeCustomerDataReport } from "../../app/shops/customer-data-requests.server";
import { credentialContext, recordInstall } from "../../app/shops/shop-credentials.server";
import { paymentColumns } from "../support/payment-rows";
import { sendShopifyWebhook, shopifyHmac, shopifyWebhookHeaders } from "../support/shopify-webhooks";
import { sendPaymentSession, startStack, waitFor, type Stack } from "../support/stack";

const OTHER_SHOP = "other-shop.myshopify.com";
let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
  const other = await connectSandbox(stack.services, OTHER_SHOP);
  if (!other.ok) throw new Error(other.message);
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

const db = () => stack.services.db;

async function secretOf(shopDomain: string): Promise<string> {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain } });
  return stack.services.cipher.decrypt(shop.sandboxSecretKeyEnc!, credentialContext(shop.id, "sandbox", "secret-key"));
}

const signed = (body: string | Uint8Array) => shopifyHmac(stack, body);
const webhookHeaders = (topic: string, body: string, shop: string, changes: Record<string, string | undefined> = {}) => shopifyWebhookHeaders(stack, topic, body, shop, changes);
const shopifyWebhook = (topic: string, payload: unknown, shop = stack.shopDomain, webhookId?: string, triggeredAt?: Date) =>
  sendShopifyWebhook(stack, topic, payload, { shop, ...(webhookId ? { webhookId } : {}), ...(triggeredAt ? { triggeredAt } : {}) });

it("a webhook for shop A signed with shop B's Secret Key is rejected", async () => {
  const { session } = await stack.standin.state.startPayment({ test: true });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  const shopA = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  const body = `{"identifier": "${payment.gatewayOrderId}", "status": "CO"}`;
  const nonce = String(Math.floor(Date.now() / 1000));
  const signedByB = signWebhook({ secretHex: await secretOf(OTHER_SHOP), nonce, rawBody: body });
  const refused = await fetch(`${stack.app.url}/gateway/webhooks/${shopA.webhookToken}`, { method: "POST", body, headers: { "x-nonce": nonce, "x-signature": signedByB } });
  expect(refused.status).toBe(401);
  const signedByA = signWebhook({ secretHex: await secretOf(stack.shopDomain), nonce, rawBody: body });
  const accepted = await fetch(`${stack.app.url}/gateway/webhooks/${shopA.webhookToken}`, { method: "POST", body, headers: { "x-nonce": nonce, "x-signature": signedByA } });
  expect(accepted.status).toBe(200);
  // Accepted, but only a trigger: the order is read back and is still unpaid.
  await waitFor(async () => (await db().gatewayWebhook.count({ where: { shopId: shopA.id, processedAt: null } })) === 0, "processed");
  expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).state).toBe("awaiting_payment");
});

it("a payment session for another shop's payment id creates its own record: shops never share payments", async () => {
  const session = stack.standin.state.createPaymentSession({ test: true });
  const post = (shop: string) => sendPaymentSession(stack, session.request, shop);
  expect((await post(stack.shopDomain)).status).toBe(200);
  expect((await post(OTHER_SHOP)).status).toBe(200);
  const rows = await db().payment.findMany({ where: { shopifyPaymentId: session.id }, include: { shop: true } });
  expect(rows.map((r) => r.shop.shopDomain).sort()).toEqual([OTHER_SHOP, stack.shopDomain].sort());
  expect(new Set(rows.map((r) => r.gatewayOrderId)).size).toBe(2);
});

it("customers/redact erases the customer's fields from payment records", async () => {
  const { session } = await stack.standin.state.startPayment({ test: true, customer: { email: "erase.me@example.com" } });
  const before = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  expect(before.customerEmail).toBe("erase.me@example.com");
  const response = await shopifyWebhook("customers/redact", { shop_domain: stack.shopDomain, customer: { id: 1, email: "erase.me@example.com", phone: null }, orders_to_redact: [] });
  expect(response.status).toBe(200);
  const after = await db().payment.findUniqueOrThrow({ where: { id: before.id } });
  expect([after.customerEmail, after.customerName, after.customerPhone, after.billingAddress]).toEqual([null, null, null, null]);
  expect(after.amount).toBe(before.amount);
});

it("customers/data_request keeps a report of the customer's payments for the merchant, once per webhook; customers/redact deletes it", async () => {
  const email = "asks.for.data@example.com";
  const { session } = await stack.standin.state.startPayment({ test: true, customer: { email } });
  await stack.standin.state.startPayment({ test: true, customer: { email: "someone.else@example.com" } });
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  const payload = { shop_id: 1, shop_domain: stack.shopDomain, customer: { id: 77, email, phone: null }, orders_requested: [1001], data_request: { id: 9 } };
  const webhookId = randomUUID();
  for (let delivery = 0; delivery < 2; delivery++) expect((await shopifyWebhook("customers/data_request", payload, stack.shopDomain, webhookId)).status).toBe(200);

  const requests = await listCustomerDataRequests(db(), shop.id);
  expect(requests).toHaveLength(1);
  expect(requests[0]).toMatchObject({ customerEmail: email, dataRequestId: "9", paymentCount: 1, downloadedAt: null });
  // Another shop cannot take it; the shop's own download marks it.
  const other = await db().shop.findUniqueOrThrow({ where: { shopDomain: OTHER_SHOP } });
  expect(await takeCustomerDataReport(db(), other.id, requests[0]!.id, new Date())).toBeNull();
  const taken = await takeCustomerDataReport(db(), shop.id, requests[0]!.id, new Date());
  const report = JSON.parse(taken!.report) as { customer: unknown; ordersRequested: string[]; payments: { shopifyPaymentId: string; customerEmail: string; amount: string }[] };
  expect(report.customer).toEqual({ shopifyCustomerId: "77", email, phone: null });
  expect(report.ordersRequested).toEqual(["1001"]);
  expect(report.payments).toEqual([expect.objectContaining({ shopifyPaymentId: session.id, customerEmail: email, amount: expect.any(String) })]);
  expect((await listCustomerDataRequests(db(), shop.id))[0]!.downloadedAt).not.toBeNull();

  const redacted = await shopifyWebhook("customers/redact", { shop_domain: stack.shopDomain, customer: { id: 77, email, phone: null }, orders_to_redact: [] });
  expect(redacted.status).toBe(200);
  expect(await listCustomerDataRequests(db(), shop.id)).toHaveLength(0);
});

it("a phone shared by customers with other e-mails names none of them: data requests and redactions follow the e-mail, the phone only payments without one", async () => {
  const phone = "+34600111222";
  const payment = async (customer: { email?: string; phone_number: string }) => {
    const { session } = await stack.standin.state.startPayment({ test: true, customer });
    return db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  };
  const alice = await payment({ email: "alice.household@example.com", phone_number: phone });
  const bob = await payment({ email: "bob.household@example.com", phone_number: phone });
  const phoneOnly = await payment({ email: undefined, phone_number: phone });
  expect([alice.customerPhone, bob.customerPhone, phoneOnly.customerPhone, phoneOnly.customerEmail]).toEqual([phone, phone, phone, null]);

  const customer = { id: 78, email: "bob.household@example.com", phone };
  const webhookId = randomUUID();
  expect((await shopifyWebhook("customers/data_request", { shop_domain: stack.shopDomain, customer, orders_requested: [] }, stack.shopDomain, webhookId)).status).toBe(200);
  const stored = await db().customerDataRequest.findFirstOrThrow({ where: { webhookId } });
  const report = JSON.parse(stored.report) as { payments: { shopifyPaymentId: string }[] };
  expect(report.payments.map((p) => p.shopifyPaymentId).sort()).toEqual([bob.shopifyPaymentId, phoneOnly.shopifyPaymentId].sort());

  expect((await shopifyWebhook("customers/redact", { shop_domain: stack.shopDomain, customer, orders_to_redact: [] })).status).toBe(200);
  const after = async (id: string) => (await db().payment.findUniqueOrThrow({ where: { id } })).customerName;
  expect(await after(alice.id)).toBe(alice.customerName);
  expect(alice.customerName).not.toBeNull();
  expect([await after(bob.id), await after(phoneOnly.id)]).toEqual([null, null]);
});

it("a customer is found whatever the case of the e-mail typed at checkout: Shopify names them by their account's", async () => {
  const { session } = await stack.standin.state.startPayment({ test: true, customer: { email: "  Mixed.Case@Example.COM " } });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  expect(payment.customerEmail).toBe("mixed.case@example.com");

  const customer = { id: 79, email: "mixed.case@example.com", phone: null };
  const webhookId = randomUUID();
  expect((await shopifyWebhook("customers/data_request", { shop_domain: stack.shopDomain, customer: { ...customer, email: "MIXED.case@example.com" }, orders_requested: [] }, stack.shopDomain, webhookId)).status).toBe(200);
  const stored = await db().customerDataRequest.findFirstOrThrow({ where: { webhookId } });
  expect(stored).toMatchObject({ customerEmail: "mixed.case@example.com", paymentCount: 1 });

  expect((await shopifyWebhook("customers/redact", { shop_domain: stack.shopDomain, customer, orders_to_redact: [] })).status).toBe(200);
  expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).customerEmail).toBeNull();
  expect(await db().customerDataRequest.count({ where: { webhookId } })).toBe(0);
});

it("customers/redact takes the redacted customer's payments out of the reports kept for other customers' requests, which stay answerable", async () => {
  const phone = "+34600555777";
  const payment = async (customer: { email: string | undefined; phone_number: string; billing_address: Record<string, string> }) => {
    const { session } = await stack.standin.state.startPayment({ test: true, customer });
    return db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  };
  // A household phone: Bob paid with his e-mail, Carol with the phone alone; Bob's report holds both.
  const bob = await payment({ email: "bob.reporter@example.com", phone_number: phone, billing_address: { given_name: "Bob", family_name: "Reporter", line1: "Calle Bob 1", city: "Sevilla", postal_code: "41001", country_code: "ES" } });
  const carol = await payment({ email: undefined, phone_number: phone, billing_address: { given_name: "Carolina", family_name: "Phoneonlyova", line1: "Avenida Carolina 99", city: "Cordoba", postal_code: "14002", country_code: "ES" } });
  expect(carol.customerEmail).toBeNull();
  const webhookId = randomUUID();
  const bobAsks = { shop_domain: stack.shopDomain, customer: { id: 501, email: "bob.reporter@example.com", phone }, orders_requested: [] };
  expect((await shopifyWebhook("customers/data_request", bobAsks, stack.shopDomain, webhookId)).status).toBe(200);
  expect((await db().customerDataRequest.findFirstOrThrow({ where: { webhookId } })).paymentCount).toBe(2);

  expect((await shopifyWebhook("customers/redact", { shop_domain: stack.shopDomain, customer: { id: 502, email: null, phone }, orders_to_redact: [] })).status).toBe(200);
  expect((await db().payment.findUniqueOrThrow({ where: { id: carol.id } })).customerName).toBeNull();
  const kept = await db().customerDataRequest.findFirstOrThrow({ where: { webhookId } });
  const report = JSON.parse(kept.report) as { payments: { shopifyPaymentId: string }[] };
  expect(report.payments.map((p) => p.shopifyPaymentId)).toEqual([bob.shopifyPaymentId]);
  expect(kept.paymentCount).toBe(1);
  expect(kept.report).toContain("Calle Bob 1");
  const reports = await db().customerDataRequest.findMany({ select: { report: true } });
  expect(reports.filter((r) => /Phoneonlyova|Avenida Carolina 99/.test(r.report))).toEqual([]);
});

it("customers/data_request reports everything held about the customer's payments: locale, gateway order, coin amounts and transactions", async () => {
  const email = "complete.report@example.com";
  const { session } = await stack.standin.state.startPayment({ test: true, customer: { email, phone_number: "+34600999000" }, locale: "pt-BR" });
  const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  expect(payment.merchantLocale).toBe("pt-BR");
  for (const body of [{ action: "choose_currency", currency: "BTC" }, { action: "pay", amount: "exact" }, { action: "confirm" }]) {
    await stack.sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, body);
  }
  await waitFor(async () => (await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).state === "paid", "paid");
  await reconcileOnce(stack.services, { worker: "test", force: true });
  const paid = await db().payment.findUniqueOrThrow({ where: { id: payment.id }, include: { transactions: true } });
  expect(paid.transactions).toHaveLength(1);
  const [tx] = paid.transactions;

  const webhookId = randomUUID();
  expect((await shopifyWebhook("customers/data_request", { shop_domain: stack.shopDomain, customer: { id: 504, email, phone: null }, orders_requested: [] }, stack.shopDomain, webhookId)).status).toBe(200);
  const stored = await db().customerDataRequest.findFirstOrThrow({ where: { webhookId } });
  const report = JSON.parse(stored.report) as { payments: Record<string, unknown>[] };
  expect(report.payments).toEqual([
    expect.objectContaining({
      shopifyPaymentId: session.id,
      locale: "pt-BR",
      gatewayOrderId: paid.gatewayOrderId,
      inputCurrency: "BTC",
      cryptoAmount: paid.cryptoAmount,
      receivedAmount: paid.receivedAmount,
      transactions: [{ txHash: tx!.txHash, currency: tx!.currency, amount: tx!.amount, confirmed: tx!.confirmed, seenAt: tx!.seenAt.toISOString() }],
    }),
  ]);
  expect([paid.cryptoAmount, paid.receivedAmount]).not.toContain(null);
});

it("customers/data_request without a customer object is refused with a 400 and stores nothing", async () => {
  const before = await db().customerDataRequest.count();
  const response = await shopifyWebhook("customers/data_request", { shop_domain: stack.shopDomain, orders_requested: "all" });
  expect(response.status).toBe(400);
  expect(await db().customerDataRequest.count()).toBe(before);
});

it("app/uninstalled deletes the credentials and the tokens; open payments keep their records", async () => {
  const { session } = await stack.standin.state.startPayment({ test: true }, {});
  const open = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  // The merchant uninstalls: Shopify revokes the app's tokens, then sends app/uninstalled.
  stack.standin.state.uninstallApp();
  const response = await shopifyWebhook("app/uninstalled", { id: 1, domain: stack.shopDomain }, stack.shopDomain);
  expect(response.status).toBe(200);
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  expect(shop.uninstalledAt).not.toBeNull();
  expect([shop.liveDeviceKeyEnc, shop.sandboxDeviceKeyEnc, shop.sandboxSecretKeyEnc]).toEqual([null, null, null]);
  expect(await db().session.count({ where: { shop: stack.shopDomain } })).toBe(0);
  expect(await db().payment.count({ where: { id: open.id } })).toBe(1);
  const refused = await stack.standin.state.startPayment({ test: true });
  expect(refused.delivery.status).toBe(422);
});

it("an app/uninstalled that Shopify retries after the merchant installed the app again leaves the new install alone", async () => {
  // Installed again (the token exchange's afterAuth, then the sandbox connected) after the uninstall above.
  const uninstalledAt = new Date();
  await new Promise((resolve) => setTimeout(resolve, 5));
  await recordInstall(db(), stack.shopDomain, new Date());
  const token = stack.standin.state.installApp();
  await db().session.create({ data: { id: offlineSessionId(stack.shopDomain), shop: stack.shopDomain, state: "", isOnline: false, accessToken: token, scope: "write_payment_gateways,write_payment_sessions" } });
  expect((await connectSandbox(stack.services, stack.shopDomain)).ok).toBe(true);
  const installed = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  expect(installed.uninstalledAt).toBeNull();
  expect(installed.installedAt!.getTime()).toBeGreaterThan(uninstalledAt.getTime());

  const late = await shopifyWebhook("app/uninstalled", { id: 1, domain: stack.shopDomain }, stack.shopDomain, randomUUID(), uninstalledAt);
  expect(late.status).toBe(200);
  const kept = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  expect(kept.uninstalledAt).toBeNull();
  expect(kept.sandboxDeviceKeyEnc).not.toBeNull();

  // One triggered after the new install is a real uninstall (Shopify revoked the new token).
  stack.standin.state.uninstallApp();
  expect((await shopifyWebhook("app/uninstalled", { id: 1, domain: stack.shopDomain }, stack.shopDomain)).status).toBe(200);
  expect((await db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } })).uninstalledAt).not.toBeNull();
});

it("shop/redact deletes everything held for the shop", async () => {
  expect((await shopifyWebhook("customers/data_request", { shop_domain: OTHER_SHOP, customer: { id: 5, email: "x@example.com" } }, OTHER_SHOP)).status).toBe(200);
  expect(await db().customerDataRequest.count({ where: { shop: { shopDomain: OTHER_SHOP } } })).toBe(1);
  // Shopify sends shop/redact 48 hours after the uninstall.
  expect((await shopifyWebhook("app/uninstalled", { id: 5, domain: OTHER_SHOP }, OTHER_SHOP)).status).toBe(200);
  const response = await shopifyWebhook("shop/redact", { shop_id: 1, shop_domain: OTHER_SHOP }, OTHER_SHOP);
  expect(response.status).toBe(200);
  expect(await db().customerDataRequest.count({ where: { shop: { shopDomain: OTHER_SHOP } } })).toBe(0);
  expect(await db().shop.count({ where: { shopDomain: OTHER_SHOP } })).toBe(0);
  expect(await db().payment.count({ where: { shop: { shopDomain: OTHER_SHOP } } })).toBe(0);
});

it("a shop/redact retried after the merchant installed the app again leaves the new install alone; the one after the next uninstall deletes it", async () => {
  const shopDomain = "reinstalling-shop.myshopify.com";
  const pause = () => new Promise((resolve) => setTimeout(resolve, 5));
  expect((await connectSandbox(stack.services, shopDomain)).ok).toBe(true);
  // The merchant uninstalls; the uninstall is carried out.
  expect((await shopifyWebhook("app/uninstalled", { id: 6, domain: shopDomain }, shopDomain)).status).toBe(200);
  await pause();
  // 48 hours later Shopify triggers shop/redact; its first delivery fails (the app is down).
  const redactTriggeredAt = new Date();
  await pause();
  // The merchant installs the app again (afterAuth of the token exchange), a new offline token
  // is stored, the sandbox is connected again and a shopper pays.
  await recordInstall(db(), shopDomain, new Date());
  await db().session.create({ data: { id: offlineSessionId(shopDomain), shop: shopDomain, state: "", isOnline: false, accessToken: "shpat_reinstalled_token_0001", scope: "write_payment_gateways" } });
  expect((await connectSandbox(stack.services, shopDomain)).ok).toBe(true);
  const before = await db().shop.findUniqueOrThrow({ where: { shopDomain } });
  const payment = await db().payment.create({ data: paymentColumns(before.id) });

  // Shopify's retry of the shop/redact arrives.
  expect((await shopifyWebhook("shop/redact", { shop_id: 6, shop_domain: shopDomain }, shopDomain, randomUUID(), redactTriggeredAt)).status).toBe(200);
  const held = async () => {
    const shop = await db().shop.findUnique({ where: { shopDomain } });
    return {
      shopRow: shop?.id === before.id,
      sandboxCredentials: shop?.sandboxDeviceKeyEnc != null,
      offlineToken: (await db().session.count({ where: { shop: shopDomain } })) > 0,
      newInstallPayment: (await db().payment.count({ where: { id: payment.id } })) > 0,
    };
  };
  const kept = await held();
  expect(kept).toEqual({ shopRow: true, sandboxCredentials: true, offlineToken: true, newInstallPayment: true });

  // The merchant uninstalls again; the shop/redact that follows that uninstall deletes everything.
  expect((await shopifyWebhook("app/uninstalled", { id: 6, domain: shopDomain }, shopDomain)).status).toBe(200);
  expect((await shopifyWebhook("shop/redact", { shop_id: 6, shop_domain: shopDomain }, shopDomain)).status).toBe(200);
  expect(await held()).toEqual({ shopRow: false, sandboxCredentials: false, offlineToken: false, newInstallPayment: false });
});

it("a shop/redact after an app/uninstalled that never arrived deletes the shop, installed as it seems", async () => {
  const shopDomain = "lost-uninstall.myshopify.com";
  expect((await connectSandbox(stack.services, shopDomain)).ok).toBe(true);
  // Installed three days ago; the uninstall two days ago was never delivered.
  await db().shop.update({ where: { shopDomain }, data: { installedAt: new Date(Date.now() - 3 * 86_400_000) } });
  expect((await shopifyWebhook("shop/redact", { shop_id: 7, shop_domain: shopDomain }, shopDomain)).status).toBe(200);
  expect(await db().shop.count({ where: { shopDomain } })).toBe(0);
});

it("a shop's webhooks are handled while its offline token has expired and cannot be renewed", async () => {
  // An idle shop: its expiring offline token lapsed an hour ago, and renewing it fails (after
  // an uninstall Shopify refuses the refresh token). None of these webhooks needs the token.
  const shopDomain = "idle-shop.myshopify.com";
  expect((await connectSandbox(stack.services, shopDomain)).ok).toBe(true);
  await db().session.create({
    data: {
      id: offlineSessionId(shopDomain),
      shop: shopDomain,
      state: "installed",
      isOnline: false,
      accessToken: "shpat_expired_offline_token_0001",
      scope: "write_payment_gateways",
      expires: new Date(Date.now() - 3_600_000),
      refreshToken: "shprt_refused_refresh_token_0001",
    },
  });
  const customer = { id: 80, email: "idle.customer@example.com", phone: null };

  expect((await shopifyWebhook("app/scopes_update", { current: ["write_payment_gateways", "write_payment_sessions"] }, shopDomain)).status).toBe(200);
  expect((await db().session.findUniqueOrThrow({ where: { id: offlineSessionId(shopDomain) } })).scope).toBe("write_payment_gateways,write_payment_sessions");
  // A "current" that is not a list of scope names is refused, and the stored scopes stay.
  for (const current of [[{ scope: "write_payment_gateways" }, null, 7], "write_payment_gateways", ["write payment"], undefined]) {
    expect((await shopifyWebhook("app/scopes_update", { current }, shopDomain)).status, JSON.stringify(current)).toBe(400);
  }
  expect((await db().session.findUniqueOrThrow({ where: { id: offlineSessionId(shopDomain) } })).scope).toBe("write_payment_gateways,write_payment_sessions");
  expect((await shopifyWebhook("customers/data_request", { shop_domain: shopDomain, customer, orders_requested: [] }, shopDomain)).status).toBe(200);
  expect(await db().customerDataRequest.count({ where: { shop: { shopDomain } } })).toBe(1);
  expect((await shopifyWebhook("customers/redact", { shop_domain: shopDomain, customer, orders_to_redact: [] }, shopDomain)).status).toBe(200);
  expect(await db().customerDataRequest.count({ where: { shop: { shopDomain } } })).toBe(0);

  expect((await shopifyWebhook("app/uninstalled", { id: 2, domain: shopDomain }, shopDomain)).status).toBe(200);
  expect((await db().shop.findUniqueOrThrow({ where: { shopDomain } })).uninstalledAt).not.toBeNull();
  expect(await db().session.count({ where: { shop: shopDomain } })).toBe(0);
  expect((await shopifyWebhook("shop/redact", { shop_id: 2, shop_domain: shopDomain }, shopDomain)).status).toBe(200);
  expect(await db().shop.count({ where: { shopDomain } })).toBe(0);
});

it("a webhook is refused unless its HMAC signs its body, its headers are Shopify's and it is for the route's topic; nothing is done", async () => {
  const shopDomain = "refusing-shop.myshopify.com";
  expect((await connectSandbox(stack.services, shopDomain)).ok).toBe(true);
  const payload = JSON.stringify({ shop_id: 3, shop_domain: shopDomain });
  const post = (body: string | Uint8Array<ArrayBuffer>, changes: Record<string, string | undefined> = {}, method = "POST") =>
    fetch(`${stack.app.url}/webhooks/shop/redact`, { method, body, headers: webhookHeaders("shop/redact", payload, shopDomain, changes) });
  const cases: [string, Response, number][] = [
    ["an HMAC of another body", await post(payload, { "x-shopify-hmac-sha256": signed(payload.replace("3", "4")) }), 401],
    ["an HMAC keyed with another secret", await post(payload, { "x-shopify-hmac-sha256": createHmac("sha256", "another-secret").update(payload).digest("base64") }), 401],
    ["no HMAC", await post(payload, { "x-shopify-hmac-sha256": undefined }), 400],
    ["no topic", await post(payload, { "x-shopify-topic": undefined }), 400],
    ["another topic", await post(payload, { "x-shopify-topic": "customers/redact" }), 400],
    ["no shop", await post(payload, { "x-shopify-shop-domain": undefined }), 400],
    ["a shop that is no domain", await post(payload, { "x-shopify-shop-domain": "not a domain" }), 400],
    ["no webhook id", await post(payload, { "x-shopify-webhook-id": undefined }), 400],
    ["no API version", await post(payload, { "x-shopify-api-version": undefined }), 400],
    ["a signed body that is not JSON", await post("not json", { "x-shopify-hmac-sha256": signed("not json") }), 400],
    ["a signed body that is not UTF-8", await post(new Uint8Array([0x7b, 0xff, 0x7d]), { "x-shopify-hmac-sha256": signed(new Uint8Array([0x7b, 0xff, 0x7d])) }), 400],
    ["an empty body", await post("", { "x-shopify-hmac-sha256": signed("") }), 400],
    ["a PUT", await post(payload, {}, "PUT"), 405],
  ];
  for (const [what, response, status] of cases) {
    expect(response.status, what).toBe(status);
    if (status !== 405) expect(((await response.json()) as { error?: string }).error, what).toBeTruthy();
  }
  expect(await db().shop.count({ where: { shopDomain } })).toBe(1);

  // An unreadable X-Shopify-Triggered-At is taken as not known: the webhook is handled.
  expect((await post(payload, { "x-shopify-triggered-at": "yesterday" })).status).toBe(200);
  expect(await db().shop.count({ where: { shopDomain } })).toBe(0);
});
