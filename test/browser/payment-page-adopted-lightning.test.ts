// A Lightning (BTCL) pick whose creation answer was lost: the gateway made the order but
// answered 500, and the pick found it in the device's listing and adopted it. A listing carries
// no payment_uri (for BTCL the invoice, the only way to pay) and no web_url, so nothing can pay
// that order: the page says so and offers another way to pay, instead of waiting for a payment
// it gives no means to make.
import { beforeAll, describe, expect, it } from "vitest";
import { pageTexts } from "../../app/payment-page/texts";
import { stackForFile } from "../support/stack";

const stack = stackForFile();
const en = pageTexts("en");

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

/** The markup a browser shows (the scripts carry every text of the page as data). */
/** The page as a browser running its scripts shows it: no scripts, nor what only a browser without them shows. */
function shown(html: string): string {
  return html.replace(/<script\b[\s\S]*?<\/script>/g, "").replace(/<noscript>[\s\S]*?<\/noscript>/g, "").replace(/<!-- -->/g, "");
}

describe("a Lightning pick whose creation answer was lost", () => {
  it("says nothing can be paid here and offers another way to pay, back to the checkout", async () => {
    const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "en", amount: "25.00", currency: "EUR" });
    expect(delivery.status).toBe(200);
    // The gateway makes the order, then its answer is lost (a 500 after the work).
    await stack().sandboxControl("/sandbox/faults", { endpoint: "orders.create", kind: "http_500", count: 1, after_create: true });
    const chosen = await fetch(delivery.redirectUrl!, { method: "POST", body: new URLSearchParams({ symbol: "BTCL" }), redirect: "manual" });
    expect(chosen.status).toBe(303);
    const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
    // The order was found and adopted: the payment waits for the shopper to pay it.
    expect(payment).toMatchObject({ state: "awaiting_payment", inputCurrency: "BTCL", gatewayStatus: "PE" });

    const page = await fetch(new URL(chosen.headers.get("location")!, delivery.redirectUrl!));
    expect(page.status).toBe(200);
    const html = shown(await page.text());
    expect(html).not.toContain('id="invoice"');
    expect(html).not.toContain(en.continueOnGateway);
    // Said where the status stands, with the way to pay otherwise as the page's one button.
    expect(html).toContain(en.noPaymentDetails);
    expect(html).not.toContain(en.statuses.waiting);
    const anotherWay = stack().services.links.returnUrl(payment, "ko");
    const button = /<a class="button" href="([^"]+)">([^<]+)<\/a>/.exec(html);
    expect(button?.[2]).toBe(en.payAnotherWay);
    expect(new URL(button![1]!.replace(/&amp;/g, "&"), anotherWay).href).toBe(anotherWay);

    // That way leads back to the checkout, where the shopper chooses again.
    const back = await fetch(anotherWay, { redirect: "manual" });
    expect(back.status).toBe(303);
    expect(back.headers.get("location")).toBe(payment.cancelUrl);
  }, 60_000);
});
