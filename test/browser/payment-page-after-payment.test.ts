// What the app's own payment page asks of a shopper once money has arrived or the order's
// time has run out, and the return link's page while Shopify is being told:
// - paid in full (AC, confirming): the payment is received and nothing more is to be sent;
//   no QR code, amount, address or Copy button invites a second payment;
// - partly paid when the time runs out: the order stays AC at the gateway (no expiry is
//   notified) and the rest sent late would end it OC, so the page stops asking for the rest
//   — on the server, and in the browser the moment the countdown reaches zero — says what
//   arrived and what to do, and goes on following the order until it ends;
// - partly paid while the rest due is not known (the gateway's rounded percentage, before the
//   order's transactions): nothing is asked for, since the gateway's request is for the full amount;
// - nothing sent when the time runs out: nothing more is asked either;
// - the gateway reports a status the app does not know (left for the merchant): nothing is
//   asked for, and a shopper who paid is told not to pay again;
// - the return link's waiting page speaks the payment's language.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Clock } from "../../app/payments/deps";
import { checkPaymentNow } from "../../app/payments/check-payment";
import { settleFromGatewayOrder } from "../../app/payments/settle-payment";
import { pageTexts } from "../../app/payment-page/texts";
import { documentedOrder } from "../gateway/support/fixtures";
import { browserForFile, saveScreenshot } from "../support/browser";
import { stackForFile, waitFor } from "../support/stack";
import { PHONE, waitForHydration } from "./support/admin";

/** The app's clock: real time moved by `offsetMs`, or held still at `frozenAtMs`. */
let offsetMs = 0;
let frozenAtMs: number | null = null;
const clock: Clock = { now: () => new Date(frozenAtMs ?? Date.now() + offsetMs) };
const stack = stackForFile({ clock });
const browser = browserForFile();
const en = pageTexts("en");

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

afterEach(() => {
  offsetMs = 0;
  frozenAtMs = null;
  stack().standin.state.clearFaults();
});

/** A payment started from checkout with `symbol` chosen on the app's page. */
async function chooseCoin(symbol: string, amount: string, locale = "en") {
  const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale, amount, currency: "EUR" });
  const chosen = await fetch(delivery.redirectUrl!, { method: "POST", body: new URLSearchParams({ symbol }), redirect: "manual" });
  expect(chosen.status).toBe(303);
  const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  const pageUrl = new URL(chosen.headers.get("location")!, delivery.redirectUrl!);
  const act = (body: Record<string, unknown>) => stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, body);
  const read = () => checkPaymentNow(stack().services, payment.shopId, payment.id);
  return { session, payment, pageUrl, act, read };
}

/** The page as the shopper sees it: its markup without the scripts (which carry every text of the page's language as data) and without the markers React puts between adjacent texts. */
async function shownHtml(url: URL): Promise<string> {
  const answer = await fetch(url);
  expect(answer.status).toBe(200);
  return (await answer.text()).replace(/<script\b[\s\S]*?<\/script>/g, "").replace(/<!-- -->/g, "");
}

async function liveStatus(pageUrl: URL): Promise<{ status: string; redirectUrl: string | null }> {
  const statusUrl = new URL(`${pageUrl.pathname}/status${pageUrl.search}`, pageUrl);
  return (await (await fetch(statusUrl)).json()) as { status: string; redirectUrl: string | null };
}

/** Everything the page uses to ask for a payment. */
function payInstructions(html: string) {
  return {
    scanQr: html.includes(en.scanQr),
    qrCode: html.includes('class="qr"'),
    exactAmount: html.includes('id="amount"'),
    remaining: html.includes('id="remaining"'),
    sendTheRest: html.includes(en.sendTheRest),
    address: html.includes('id="address"'),
    copyButton: html.includes('class="copy"'),
    countdown: html.includes('id="countdown"'),
  };
}
/**
 * The page's "Return to the shop" button leads through the payment's signed standby link, which
 * tells Shopify the payment is pending (`reason`) and sends the shopper to the order's page.
 */
async function expectWayBackToShop(html: string, payment: { id: string; shopId: string }, sessionId: string, reason: string) {
  const standby = stack().services.links.returnUrl(payment, "standby");
  expect(html).toContain(`<a class="button" href="${standby.replace(/&/g, "&amp;")}">${en.backToShop}</a>`);
  const back = await fetch(standby, { redirect: "manual" });
  expect(back.status).toBe(303);
  const shopify = stack().standin.state.session(sessionId)!.state;
  expect(shopify.code === "PENDING" && shopify.reason).toBe(reason);
  const { nextActionUrl } = await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(nextActionUrl).not.toBeNull();
  expect(back.headers.get("location")).toBe(nextActionUrl);
}

const NOTHING_ASKED = { scanQr: false, qrCode: false, exactAmount: false, remaining: false, sendTheRest: false, address: false, copyButton: false, countdown: false };

describe("the app's payment page once money has arrived", () => {
  it("tells a shopper who paid in full that the payment is received, and shows nothing more to send", async () => {
    const { payment, pageUrl, act, read } = await chooseCoin("ETH", "49.00");
    const before = await shownHtml(pageUrl);
    expect(payInstructions(before)).toMatchObject({ scanQr: true, qrCode: true, exactAmount: true, address: true, copyButton: true });

    await act({ action: "pay", amount: "exact" });
    await read();
    expect((await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).state).toBe("confirming");
    const html = await shownHtml(pageUrl);
    expect(html).toContain(en.statuses.confirming);
    expect(html).toContain(en.backToShop);
    expect(payInstructions(html)).toEqual(NOTHING_ASKED);
    expect(html).not.toContain(en.exactAmount);
  });

  it("asks a partly paid shopper for nothing while the rest due is unknown (a percentage, no transactions yet), and for the rest once it is known", async () => {
    const { payment, pageUrl, act, read } = await chooseCoin("ETH", "49.00");
    await act({ action: "pay", amount: "less" });
    await read();
    // What the app holds when the gateway's read gave a percentage under 100 but no transactions.
    const held = await stack().services.db.paymentTransaction.findMany({ where: { paymentId: payment.id } });
    expect(held.length).toBeGreaterThan(0);
    await stack().services.db.paymentTransaction.deleteMany({ where: { paymentId: payment.id } });
    const unknown = await shownHtml(pageUrl);
    // The status says so, and not "Please send the rest": it is what a screen reader announces.
    expect(/id="payment-status">([^<]*)</.exec(unknown)?.[1]).toBe(en.restUnknown);
    expect(unknown).not.toContain(en.statuses.partial);
    // The gateway's payment request is for the full amount: no QR code, link or amount that would ask for it again.
    expect(payInstructions(unknown)).toEqual(NOTHING_ASKED);
    expect(unknown).not.toContain(en.openInWallet);
    expect(unknown).not.toContain(en.noPaymentDetails);
    expect(unknown).not.toContain(en.payAnotherWay);

    // The next read brings the transactions: the rest is asked for, and only the rest.
    await read();
    const known = await shownHtml(pageUrl);
    expect(known).not.toContain(en.restUnknown);
    expect(payInstructions(known)).toMatchObject({ remaining: true, qrCode: true, sendTheRest: true, exactAmount: false });
  });

  it("an open page that says the rest due is not known yet follows the payment, and asks for the rest once its transactions are known", async () => {
    const { payment, pageUrl, act, read } = await chooseCoin("ETH", "49.00");
    const page = await browser().newPage({ viewport: PHONE });
    try {
      await page.goto(pageUrl.toString(), { waitUntil: "load" });
      await waitForHydration(page);
      // The app holds a percentage under 100 and no transactions yet; the page's polls wait meanwhile.
      let blocked = true;
      await page.route("**/status?**", (route) => (blocked ? route.abort() : route.continue()));
      await act({ action: "pay", amount: "less" });
      await read();
      await waitFor(async () => (await stack().services.db.gatewayWebhook.count({ where: { processedAt: null } })) === 0, "an idle inbox");
      frozenAtMs = Date.now();
      await stack().services.db.payment.update({ where: { id: payment.id }, data: { lastCheckedAt: new Date(frozenAtMs) } });
      await stack().services.db.paymentTransaction.deleteMany({ where: { paymentId: payment.id } });
      blocked = false;
      await page.getByText(en.restUnknown).waitFor({ timeout: 30_000 });

      // The next read brings the transactions: same status, same rounded percentage, but the
      // open page (polling every 4 s) moves on to the rest due, as its text says it will.
      frozenAtMs = null;
      await read();
      await page.locator("#remaining").waitFor({ timeout: 20_000 });
      expect(await page.getByText(en.restUnknown).isVisible()).toBe(false);
    } finally {
      await page.close();
    }
  }, 90_000);

  it("stops asking a partly paid shopper for the rest once the order's time has run out, says what arrived and what to do, and leads back to the shop", async () => {
    const { session, payment, pageUrl, act, read } = await chooseCoin("ETH", "49.00");
    await act({ action: "pay", amount: "less" });
    await read();
    const partial = await shownHtml(pageUrl);
    expect(partial).toContain(en.statuses.partial);
    expect(payInstructions(partial)).toMatchObject({ remaining: true, qrCode: true, sendTheRest: true, countdown: true });

    // The order's time passes. The gateway keeps it AC: no expiry reaches the app.
    const row = await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    offsetMs = row.expiresAt!.getTime() - Date.now() + 60_000;
    const html = await shownHtml(pageUrl);
    expect((await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).gatewayStatus).toBe("AC");
    expect(html).toContain(en.statuses.partial_expired);
    expect(html).toContain(en.partialExpiredHelp);
    expect(html).toMatch(/Received: 0\.\d+ ETH \(€24\.50; [\d.]+%\)/);
    expect(html).not.toContain(en.statuses.partial);
    expect(payInstructions(html)).toEqual(NOTHING_ASKED);
    // Paying another way would leave the money received at the gateway.
    expect(html).not.toContain(en.payAnotherWay);
    // The page goes on following the order.
    expect(await liveStatus(pageUrl)).toMatchObject({ status: "partial_expired", redirectUrl: null });
    // And lets the shopper go back to the shop, where Shopify shows the order as pending.
    await expectWayBackToShop(html, payment, session.id, "NETWORK_ACTION_REQUIRED");
  });

  it("asks for nothing, tells a shopper who paid not to pay again, and leads back to the shop, while the gateway reports a status the app does not know", async () => {
    const { session, payment, pageUrl } = await chooseCoin("ETH", "20.00");
    const row = await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    const read = documentedOrder(row.gatewayOrderId!, "RF", 0, new Date().toISOString(), { amount: "20.00", currency: "EUR" });
    const settled = await settleFromGatewayOrder(stack().services, payment.id, read, "reconcile", new Date());
    expect(settled.payment).toMatchObject({ state: "awaiting_payment", gatewayStatus: "RF", attention: "unknown_status" });
    const html = await shownHtml(pageUrl);
    expect(html).toContain(en.statuses.review);
    expect(html).toContain(en.reviewHelp);
    expect(html).not.toContain(en.statuses.waiting);
    expect(payInstructions(html)).toEqual(NOTHING_ASKED);
    // Nor another way to pay: the shopper may have paid (RF: refunded, say).
    expect(html).not.toContain(en.payAnotherWay);
    expect((await liveStatus(pageUrl)).status).toBe("review");
    // But a way back to the shop, where Shopify shows the order as pending until the merchant sees to it.
    await expectWayBackToShop(html, payment, session.id, "BUYER_ACTION_REQUIRED");
  });

  it("stops asking a shopper who sent nothing once the order's time has run out", async () => {
    const { payment, pageUrl } = await chooseCoin("ETH", "20.00");
    const row = await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    // Held still, past the expiry: the page's own gateway read cannot end the order meanwhile.
    frozenAtMs = row.expiresAt!.getTime() + 1_000;
    await stack().services.db.payment.update({ where: { id: payment.id }, data: { lastCheckedAt: new Date(frozenAtMs) } });
    const html = await shownHtml(pageUrl);
    expect(html).toContain(en.statuses.expired);
    expect(html).toContain(en.expiredHelp);
    expect(payInstructions(html)).toEqual(NOTHING_ASKED);
    expect(html).toContain(en.payAnotherWay);
  });

  it("in the browser, stops asking for the rest when the countdown reaches zero, then follows the order to its end", async () => {
    const de = pageTexts("de");
    const { session, payment, pageUrl, act, read } = await chooseCoin("ETH", "49.00", "de");
    await act({ action: "pay", amount: "less" });
    await read();
    const row = await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    // The app's clock stands four seconds before the expiry: the server keeps saying "partial",
    // so only the page's own countdown can tell the time is up.
    frozenAtMs = row.expiresAt!.getTime() - 4_000;
    const page = await browser().newPage({ viewport: PHONE });
    await page.goto(pageUrl.toString(), { waitUntil: "load" });
    await waitForHydration(page);
    const status = page.getByRole("status");
    expect(await status.textContent()).toBe(de.statuses.partial);
    expect(await page.locator("#remaining").count()).toBe(1);
    await expect.poll(() => page.evaluate(() => document.documentElement.lang)).toBe("de");

    await expect.poll(() => status.textContent(), { timeout: 10_000 }).toBe(de.statuses.partial_expired);
    expect((await liveStatus(pageUrl)).status).toBe("partial");
    expect(await page.getByText(de.partialExpiredHelp).isVisible()).toBe(true);
    // In the page's notation: a decimal comma in German.
    expect(await page.getByText(new RegExp(`^${de.received}: 0,\\d+ ETH`)).isVisible()).toBe(true);
    for (const selector of ["#remaining", "#amount", "#address", ".qr", "button.copy", "#countdown"]) expect(await page.locator(selector).count(), selector).toBe(0);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await saveScreenshot(page, "app-payment-page-partial-expired");

    // The time passes for the app too; the network confirms what arrived, too little: the
    // order ends IA, the merchant is shown it, and the page takes the shopper back to Shopify.
    frozenAtMs = null;
    offsetMs = row.expiresAt!.getTime() - Date.now() + 60_000;
    await act({ action: "confirm" });
    await page.waitForURL(`${stack().standin.origin}/**`, { timeout: 45_000 });
    const ended = await waitFor(async () => {
      const p = await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
      return p.state === "failed" ? p : null;
    }, "the payment to end");
    expect(ended.gatewayStatus).toBe("IA");
    expect(ended.attention).toBe("underpaid");
    expect(stack().standin.state.session(session.id)?.state.code).toBe("REJECTED");
    await page.close();
  }, 120_000);
});

describe("the return link while Shopify is being told", () => {
  it("shows its waiting page in the payment's language, with the document's language set", async () => {
    const es = pageTexts("es");
    const { payment, pageUrl, act, read } = await chooseCoin("ETH", "49.00", "es");
    await act({ action: "pay", amount: "exact" });
    await read();
    expect(await shownHtml(pageUrl)).toContain(es.backToShop);

    // The shopper returns to the shop while Shopify's API is failing: the pending call cannot be made.
    stack().standin.state.setFault({ mode: "http_500", count: 100 });
    const answer = await fetch(stack().services.links.returnUrl(payment, "standby"), { redirect: "manual" });
    expect(answer.status).toBe(200);
    const html = await answer.text();
    expect(html).toMatch(/^<!doctype html><html lang="es">/);
    expect(html).toContain(`<title>${es.waitingForShop.title}</title>`);
    expect(html).toContain(es.waitingForShop.heading);
    expect(html).toContain(es.waitingForShop.body);
    expect(html).not.toContain(en.waitingForShop.body);

    // The page reloads the same signed link, carrying when the wait began.
    const refresh = /<meta http-equiv="refresh" content="3;url=([^"]+)">/.exec(html)?.[1]?.replace(/&amp;/g, "&");
    expect(refresh).toBeDefined();
    const reload = new URL(refresh!, stack().services.links.returnUrl(payment, "standby"));
    const link = new URL(stack().services.links.returnUrl(payment, "standby"));
    expect(reload.pathname).toBe(link.pathname);
    expect(reload.searchParams.get("sig")).toBe(link.searchParams.get("sig"));
    const began = Number(reload.searchParams.get("waiting"));
    expect(Math.abs(began - Date.now() / 1000)).toBeLessThan(60);

    // Minutes later, Shopify still failing: the page says it takes longer than usual, tells a
    // shopper who paid not to pay again, and checks every 15 s, still from when the wait began.
    const later = new URL(reload);
    later.searchParams.set("waiting", String(began - 150));
    const long = await (await fetch(later, { redirect: "manual" })).text();
    expect(long).toContain(`<title>${es.waitingLong.title}</title>`);
    expect(long).toContain(es.waitingLong.body);
    expect(long).toContain(`content="15;url=`);
    expect(long).toContain(`waiting=${began - 150}`);

    // A time ahead of now or days old (altered, bookmarked) starts the wait again.
    for (const altered of [String(began + 3_600), String(began - 3 * 86_400), "soon"]) {
      later.searchParams.set("waiting", altered);
      const again = await (await fetch(later, { redirect: "manual" })).text();
      expect(again).toContain(es.waitingForShop.body);
      expect(again).not.toContain(`waiting=${altered}`);
    }
  });
});
