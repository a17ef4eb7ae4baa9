// Money from Shopify's payment session to the gateway order and back, through the real app,
// the Shopify stand-in and the gateway sandbox over HTTP: amounts in zero-decimal fiats, the
// coins' per-payment limits on the app's own page (a coin the gateway refuses for the amount
// is not offered again, and the shopper reads why), the gateway's cause when it refuses a
// session's order, and an overpayment reaching the merchant's attention.
import { afterEach, describe, expect, it } from "vitest";
import { paymentDetail } from "../../app/admin/payments.server";
import { coinsFor } from "../../app/payment-page/payment-page.server";
import { pageTexts } from "../../app/payment-page/texts";
import { reconcileOnce } from "../../app/payments/reconcile";
import { PARTIAL_REFUND_MESSAGE, REFUND_MESSAGE } from "../../app/payments/follow-up-sessions";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { getAdminPage, postAdminForm, postForms } from "../support/admin-pages";
import { sendPaymentSession, stackForFile, waitFor } from "../support/stack";
import type { CheckoutOverrides } from "../../dev/shopify-standin/simulator";

const stack = stackForFile({ env: { DEV_ADMIN_LOGIN: "true" } });
const db = () => stack().services.db;

const shopRow = () => db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });

async function deviceKey(): Promise<string> {
  const shop = await shopRow();
  return stack().services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"));
}

/** The sandbox's order for a payment session, as the gateway lists it. */
async function sandboxOrderFor(reference: string): Promise<{ fiat: string; fiat_amount: number } | undefined> {
  const response = await fetch(`${stack().sandbox.baseUrl}/orders/`, { headers: { "X-Device-Id": await deviceKey() } });
  expect(response.status).toBe(200);
  const orders = (await response.json()) as { reference: string | null; fiat: string; fiat_amount: number }[];
  return orders.find((o) => o.reference === reference);
}

/** A session POST as Shopify sends it, with the given amount and currency. */
async function postSession(amount: string, currency: string) {
  const session = stack().standin.state.createPaymentSession({ test: true });
  const response = await sendPaymentSession(stack(), { ...session.request, amount, currency });
  return { session, status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The shop's coin settings as the file found them, put back after each test that changes them. */
let saved: { checkoutMode: string; sandboxFixedCurrency: string | null; sandboxOfferedCurrencies: string } | null = null;
async function coinSettings(data: { checkoutMode: string; sandboxFixedCurrency?: string | null; sandboxOfferedCurrencies?: string }) {
  const shop = await shopRow();
  saved ??= { checkoutMode: shop.checkoutMode, sandboxFixedCurrency: shop.sandboxFixedCurrency, sandboxOfferedCurrencies: shop.sandboxOfferedCurrencies };
  await db().shop.update({ where: { id: shop.id }, data });
}
afterEach(async () => {
  if (saved === null) return;
  await db().shop.update({ where: { shopDomain: stack().shopDomain }, data: saved });
  saved = null;
});

const act = (orderId: string, body: Record<string, unknown>) => stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, body);

describe("fiat amounts from Shopify to the gateway order", () => {
  it.each([
    ["5000.00", "JPY", "5000", 5000],
    ["120000.00", "KRW", "120000", 120000],
    ["15990.00", "CLP", "15990", 15990],
    ["4500.00", "ISK", "4500", 4500],
    ["49.900000", "EUR", "49.90", 49.9],
    ["0.01", "EUR", "0.01", 0.01],
  ])("%s %s is stored as %s and ordered as that amount in the same fiat", async (amount, currency, stored, ordered) => {
    const { session, status, body } = await postSession(amount, currency);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } })).toMatchObject({ amount: stored, currency });
    expect(await sandboxOrderFor(session.id)).toMatchObject({ fiat: currency, fiat_amount: ordered });
  });

  it.each([
    ["0.00", "EUR"],
    ["0", "JPY"],
    ["10.005", "EUR"],
    ["5000.50", "JPY"],
  ])("%s %s (zero, or more decimals than the fiat has) is refused, never rounded, with nothing stored", async (amount, currency) => {
    const { session, status, body } = await postSession(amount, currency);
    expect(status).toBe(422);
    expect(body).toMatchObject({ error: "invalid_amount" });
    expect(await db().payment.count({ where: { shopifyPaymentId: session.id } })).toBe(0);
  });

  it.each([["-1.00"], ["1e3"], ["1,00"], ["4.99e1"]])("%s (not a plain positive decimal) is refused at the door", async (amount) => {
    expect((await postSession(amount, "EUR")).status).toBe(400);
  });

  it("a JPY authorization paid in crypto: a capture of 5000.00 resolves against the stored 5000; 4999.00 is refused naming 5000 JPY", async () => {
    const { session } = await stack().standin.state.startPayment({ test: true, kind: "authorization", amount: "5000", currency: "JPY" });
    const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
    expect(payment.amount).toBe("5000");
    await act(payment.gatewayOrderId!, { action: "choose_currency", currency: "BTC" });
    await act(payment.gatewayOrderId!, { action: "pay", amount: "exact" });
    await act(payment.gatewayOrderId!, { action: "confirm" });
    await waitFor(async () => stack().standin.state.session(session.id)?.state.code === "RESOLVED", "authorization paid");
    const partial = await stack().standin.state.startFollowUp("capture", session.id, { amount: "4999.00" });
    expect(partial.delivery.status).toBe(201);
    await waitFor(async () => stack().standin.state.session(partial.session.id)?.state.code === "REJECTED", "partial capture rejected");
    const refused = stack().standin.state.session(partial.session.id)!.state;
    expect(refused.code === "REJECTED" && refused.merchantMessage).toContain("paid 5000 JPY");
    // The gateway refunds only in full: the merchant is not sent to its dashboard to return a part.
    expect(refused.code === "REJECTED" && refused.merchantMessage).toContain("a refund from its dashboard is a voucher for the full amount");
    expect(refused.code === "REJECTED" && refused.merchantMessage).toContain("capture in full, then return the difference to the shopper another way");
    const full = await stack().standin.state.startFollowUp("capture", session.id);
    expect(full.session.request.amount).toBe("5000.00");
    await waitFor(async () => stack().standin.state.session(full.session.id)?.state.code === "RESOLVED", "capture resolved");

    // A refund of part of it is declined without sending the merchant to the dashboard, which refunds only in full.
    const partRefund = await stack().standin.state.startFollowUp("refund", session.id, { amount: "1000.00" });
    await waitFor(async () => stack().standin.state.session(partRefund.session.id)?.state.code === "REJECTED", "partial refund rejected");
    const partRefused = stack().standin.state.session(partRefund.session.id)!.state;
    expect(partRefused.code === "REJECTED" && partRefused.merchantMessage).toBe(PARTIAL_REFUND_MESSAGE);
    const wholeRefund = await stack().standin.state.startFollowUp("refund", session.id);
    await waitFor(async () => stack().standin.state.session(wholeRefund.session.id)?.state.code === "REJECTED", "refund rejected");
    const wholeRefused = stack().standin.state.session(wholeRefund.session.id)!.state;
    expect(wholeRefused.code === "REJECTED" && wholeRefused.merchantMessage).toBe(REFUND_MESSAGE);
  });
});

describe("coin limits on the app's own payment page", () => {
  const texts = pageTexts("en");
  /** The page says no coin can be used (the rendered message, not the texts shipped for hydration). */
  const saysNoCoins = (html: string) => html.includes(`<p class="error">${texts.noCoins}</p>`);
  const orderAttempts = () => db().gatewayCall.count({ where: { class: "critical" } });

  async function appPagePayment(amount: string, currency: string, customer?: CheckoutOverrides["customer"]) {
    await coinSettings({ checkoutMode: "app_page" });
    const { session, delivery } = await stack().standin.state.startPayment({ test: true, amount, currency, locale: "en", ...(customer ? { customer } : {}) });
    expect(delivery.status, delivery.body).toBe(200);
    const load = () => db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id }, include: { shop: true, transactions: { select: { amount: true } } } });
    const offered = async () => (await coinsFor(stack().services, await load()))!.map((c) => c.symbol);
    const pick = (symbol: string) => fetch(delivery.redirectUrl!, { method: "POST", body: new URLSearchParams({ symbol }), redirect: "manual" });
    return { pageUrl: delivery.redirectUrl!, load, offered, pick };
  }

  it("EUR: a coin whose limits the amount is outside of is not offered; the limits are inclusive", async () => {
    // USDC_ERC20 and USDT_ERC20 take 10.00 EUR and more; BTCL at most 1000.00 EUR.
    expect(await (await appPagePayment("10.00", "EUR")).offered()).toEqual(expect.arrayContaining(["USDC_ERC20", "USDT_ERC20", "BTCL"]));
    expect(await (await appPagePayment("9.99", "EUR")).offered()).not.toContain("USDC_ERC20");
    expect(await (await appPagePayment("1000.01", "EUR")).offered()).not.toContain("BTCL");
  });

  it("EUR: an amount no offered coin can take tells the shopper so", async () => {
    const { pageUrl } = await appPagePayment("0.01", "EUR");
    await coinSettings({ checkoutMode: "app_page", sandboxOfferedCurrencies: JSON.stringify(["USDC_ERC20", "USDT_ERC20"]) });
    expect(saysNoCoins(await (await fetch(pageUrl)).text())).toBe(true);
  });

  it("USD: a coin the gateway refused for the amount is not offered again, nor one the refusal rules out; the shopper reads the gateway's reason", async () => {
    // USDC_ERC20 and USDT_ERC20 take 10.00 EUR (10.80 USD) and more: 5.00 USD is below both.
    const { pageUrl, load, offered, pick } = await appPagePayment("5.00", "USD");
    expect(await offered()).toEqual(expect.arrayContaining(["USDC_ERC20", "USDT_ERC20", "BTC"]));
    const refused = await pick("USDC_ERC20");
    expect(refused.status).toBe(422);
    expect((await load()).gatewayOrderId).toBeNull();
    const left = await offered();
    expect(left).not.toContain("USDC_ERC20");
    expect(left).not.toContain("USDT_ERC20");
    expect(left).toContain("BTC");
    const html = await (await fetch(pageUrl)).text();
    expect(html).not.toContain('value="USDC_ERC20"');
    expect(html).toContain('value="BTC"');
    // The refusal's answer says why, in the gateway's words, as text.
    const answer = await refused.text();
    const alert = /<p class="error" role="alert"[^>]*>([\s\S]*?)<\/p>/.exec(answer)?.[1];
    expect(alert).toBe(`${texts.errors.outOfLimits}<br/>The payment service says: Amount 5.00 USD is below the minimum amount of 10.80 USD for USDC_ERC20.`);
    // Picked again anyway (a page loaded before), it is refused without asking the gateway.
    const before = await orderAttempts();
    expect((await pick("USDC_ERC20")).status).toBe(400);
    expect(await orderAttempts()).toBe(before);

    // The merchant's timeline says which coin was refused, and why.
    const payment = await load();
    const detail = (await paymentDetail(db(), payment.shopId, payment.id))!;
    expect(detail.timeline.find((entry) => entry.title === "Coin refused for this amount: USDC_ERC20")?.description).toContain("below the minimum amount of 10.80 USD");

    // Another coin still makes the order.
    expect((await pick("BTC")).status).toBe(303);
    expect(await load()).toMatchObject({ state: "awaiting_payment", inputCurrency: "BTC" });
  });

  it("a shopper whose name is inside the gateway's words (Mini, in minimum) still has the coin ruled out, and reads the words whole", async () => {
    const { load, offered, pick } = await appPagePayment("5.00", "USD", { billing_address: { given_name: "Mini", family_name: "Ejemplo", country_code: "ES" } });
    const refused = await pick("USDC_ERC20");
    expect(refused.status).toBe(422);
    expect(await offered()).not.toContain("USDC_ERC20");
    const alert = /<p class="error" role="alert"[^>]*>([\s\S]*?)<\/p>/.exec(await refused.text())?.[1];
    expect(alert).toBe(`${texts.errors.outOfLimits}<br/>The payment service says: Amount 5.00 USD is below the minimum amount of 10.80 USD for USDC_ERC20.`);
    const events = await db().paymentEvent.findMany({ where: { paymentId: (await load()).id, type: "coin_refused" } });
    expect(events.map((e) => JSON.parse(e.detail) as unknown)).toEqual([{ currency: "USDC_ERC20", limit: "below_min", cause: "Amount 5.00 USD is below the minimum amount of 10.80 USD for USDC_ERC20." }]);
  });

  it("JPY 1 (below every coin's minimum): the shopper is told no coin can be used, after fewer refusals than there are coins", async () => {
    const { pageUrl, load, offered, pick } = await appPagePayment("1", "JPY");
    const coinCount = (await offered()).length;
    const attemptsBefore = await orderAttempts();
    let html = await (await fetch(pageUrl)).text();
    let picks = 0;
    // The shopper tries the coins offered, one after another.
    while (!saysNoCoins(html) && picks <= coinCount) {
      const [first] = await offered();
      expect((await pick(first!)).status).toBe(422);
      picks++;
      html = await (await fetch(pageUrl)).text();
    }
    expect(saysNoCoins(html), `after ${picks} refused picks the page still offers coins`).toBe(true);
    expect((await load()).gatewayOrderId).toBeNull();
    // Each refused pick spends one of the device's order creations: a refusal rules out the
    // coins whose minimum is as high, so the shopper is not sent round every coin.
    expect(await orderAttempts()).toBe(attemptsBefore + picks);
    expect(picks).toBeLessThan(coinCount);
  }, 60_000);

  it("a coin the gateway refuses in words that name no limit is not offered again for the payment, and rules out no other", async () => {
    const { load, offered, pick } = await appPagePayment("49.90", "EUR");
    const before = await offered();
    await stack().sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_404", count: 1 });
    try {
      const refused = await pick("LTC");
      expect(refused.status).toBe(422);
      const alert = /<p class="error" role="alert"[^>]*>([\s\S]*?)<\/p>/.exec(await refused.text())?.[1];
      expect(alert).toBe(texts.errors.rejected);
    } finally {
      await stack().sandboxControl("/sandbox/faults", undefined, "DELETE");
    }
    // A shopper picking it again would spend one of the device's order creations each time.
    expect(await offered()).toEqual(before.filter((symbol) => symbol !== "LTC"));
    const events = await db().paymentEvent.findMany({ where: { paymentId: (await load()).id, type: "coin_refused" } });
    expect(events.map((e) => JSON.parse(e.detail) as unknown)).toEqual([{ currency: "LTC", limit: "none_named", cause: "Not found." }]);
    // Another coin still makes the order.
    expect((await pick("BTC")).status).toBeLessThan(400);
    expect((await load()).inputCurrency).toBe("BTC");
  });

  it.each([
    ["a gateway failure (a 500)", "http_500", 503],
    ["a proxy's HTML 400, which is not the gateway's refusal", "proxy_400", 422],
  ])("%s on a pick hides no coin", async (_what, kind, status) => {
    const { load, offered, pick } = await appPagePayment("5.00", "USD");
    await stack().sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind, count: 1 });
    try {
      expect((await pick("LTC")).status).toBe(status);
    } finally {
      await stack().sandboxControl("/sandbox/faults", undefined, "DELETE");
    }
    expect((await load()).gatewayOrderId).toBeNull();
    expect(await offered()).toContain("LTC");
    expect(await db().paymentEvent.count({ where: { paymentId: (await load()).id, type: "coin_refused" } })).toBe(0);
  });
});

describe("a fixed coin whose limits the amount is outside of", () => {
  it("the session is refused with the gateway's cause, the same on Shopify's retry, and the merchant's timeline says why", async () => {
    // USDC_ERC20 takes 10.00 EUR and more.
    await coinSettings({ checkoutMode: "fixed_coin", sandboxFixedCurrency: "USDC_ERC20" });
    const { session, delivery } = await stack().standin.state.startPayment({ test: true, amount: "5.00", currency: "EUR" });
    const cause = "Amount 5.00 EUR is below the minimum amount of 10.00 EUR for USDC_ERC20.";
    expect(delivery.status).toBe(422);
    expect(JSON.parse(delivery.body)).toEqual({ error: "gateway_rejected", message: cause });
    const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
    expect(payment).toMatchObject({ state: "not_started", gatewayOrderId: null });

    const again = await stack().standin.state.redeliverPayment(session.id);
    expect(again.delivery.status).toBe(422);
    expect(again.delivery.body).toBe(delivery.body);

    const detail = (await paymentDetail(db(), payment.shopId, payment.id))!;
    const refused = detail.timeline.filter((entry) => entry.title === "Payment could not start");
    expect(refused).toHaveLength(1);
    expect(refused[0]!.description).toBe(
      `The gateway refused the order: "${cause}" Shopify got an error answer and showed the shopper an error at checkout, where they can try again or pay another way.`,
    );
    expect(detail.state.meaning).not.toContain("sent back");
  });
});

describe("what the merchant is told of the amount paid", () => {
  /** A gateway-page payment paid with `amount`, completed, its webhook verified by the next listing. */
  async function paidWith(amount: "exact" | "more") {
    const { session } = await stack().standin.state.startPayment({ test: true });
    const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
    await act(payment.gatewayOrderId!, { action: "choose_currency", currency: "BTC" });
    await act(payment.gatewayOrderId!, { action: "pay", amount });
    await act(payment.gatewayOrderId!, { action: "confirm" });
    await waitFor(async () => stack().standin.state.session(session.id)?.state.code === "RESOLVED", "Shopify resolve");
    await reconcileOnce(stack().services, { worker: "test", force: true });
    return db().payment.findUniqueOrThrow({ where: { id: payment.id }, include: { transactions: true } });
  }

  it("an exact payment is paid with nothing for the merchant to do", async () => {
    const paid = await paidWith("exact");
    expect(paid).toMatchObject({ state: "paid", gatewayStatus: "CO", attention: null, unverifiedSince: null });
  });

  it("an overpaid order (CO at 110 %) is paid, and the merchant is told how much more arrived and that a dashboard refund would return everything", async () => {
    const paid = await paidWith("more");
    expect(paid).toMatchObject({ state: "paid", gatewayStatus: "CO", shopifyOutcome: "resolved", attention: "overpaid", attentionResolvedAt: null, unverifiedSince: null });
    expect(Number(paid.percentage)).toBeGreaterThan(100);
    const sent = paid.transactions[0]!.amount;
    expect(paid.attentionDetail).toContain(`${sent} BTC arrived for the ${paid.cryptoAmount} BTC asked`);
    expect(paid.attentionDetail).toContain("A refund from the gateway dashboard returns the full amount, not the extra alone");

    // Listed on the attention page with what to do, and marked as handled there.
    const page = await getAdminPage(stack(), "/app/attention");
    expect(page.text).toContain("Shopper paid more than was due");
    expect(page.text).toContain(paid.attentionDetail!);
    const form = postForms(page.html).find((fields) => fields.paymentId === paid.id);
    expect((await postAdminForm(stack(), "/app/attention", form!)).status).toBe(200);
    expect((await db().payment.findUniqueOrThrow({ where: { id: paid.id } })).attentionResolvedAt).not.toBeNull();
  });
});
