// The amounts the app's payment page shows a shopper whose wallet sent too little:
// - the header gives the payment's whole amount as such, never as "due": the only amount the
//   page asks for is the rest, in the coin, below (two amounts "due" would ask for two payments);
// - what arrived (in the coin, in fiat, as a percentage) reads in the page's own notation
//   ("0,0079 ETH (24,50 €; 50,0 %)" in Spain; a semicolon, not a comma, between the two numbers), while the amount still due, which the shopper
//   copies or types into a wallet, shows and copies exactly as the gateway gave it.
import Decimal from "decimal.js";
import { beforeAll, describe, expect, it } from "vitest";
import { checkPaymentNow } from "../../app/payments/check-payment";
import { fill, pageTexts } from "../../app/payment-page/texts";
import { browserForFile } from "../support/browser";
import { stackForFile } from "../support/stack";
import { STILL_TO_PAY } from "../support/still-to-pay";
import { PHONE, waitForHydration } from "./support/admin";
import { recordCopies } from "./support/clipboard";

const stack = stackForFile();
const browser = browserForFile();

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

/** A payment of 49.00 EUR in `locale`, ETH picked on the app's page, about half of it sent: the page's link and the order as the gateway reports it. */
async function partlyPaid(locale: string) {
  const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale, amount: "49.00", currency: "EUR" });
  const chosen = await fetch(delivery.redirectUrl!, { method: "POST", body: new URLSearchParams({ symbol: "ETH" }), redirect: "manual" });
  expect(chosen.status).toBe(303);
  const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "pay", amount: "less" });
  const read = await checkPaymentNow(stack().services, payment.shopId, payment.id);
  expect(read.ok).toBe(true);
  const shop = await stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  const order = await stack().services.gateways.forShop(shop, "sandbox")!.client.orderInfo(payment.gatewayOrderId!);
  if (order.isErr()) throw new Error(`order read failed: ${order.error.kind}`);
  const arrived = new Decimal(order.value.unconfirmed_amount).plus(order.value.confirmed_amount);
  return { pageUrl: new URL(chosen.headers.get("location")!, delivery.redirectUrl!), arrived, due: new Decimal(order.value.crypto_amount!).minus(arrived), percentage: order.value.percentage };
}

/** The page as served, as text: without the scripts (which carry every text as data), tags, React's markers or entities. */
function textOf(html: string): string {
  return html
    .replace(/<script\b[\s\S]*?<\/script>/g, "")
    .replace(/<!-- -->/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&#x27;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/[ \t\r\n]+/g, " ")
    .trim();
}

async function served(url: URL): Promise<string> {
  const answer = await fetch(url);
  expect(answer.status).toBe(200);
  return answer.text();
}

/** A space Intl writes in a number (a no-break or narrow no-break space), or none. */
const SPACE = "[\\u00a0\\u202f ]?";

describe("the amounts the payment page shows after a partial payment", () => {
  it.each([
    ["en", "en", "€49.00"],
    ["es", "es", "49,00\u00a0€"],
    ["de", "de", "49,00\u00a0€"],
  ] as const)("in %s, the header gives the payment's whole amount without calling it due; the only amount asked for is the rest", async (locale, language, whole) => {
    const texts = pageTexts(language);
    const { pageUrl, due } = await partlyPaid(locale);
    const html = await served(pageUrl);
    const header = textOf(/<header\b[^>]*>([\s\S]*?)<\/header>/.exec(html)?.[1] ?? "");
    expect(header).toContain(whole);
    expect(header, `the header reads "${header}"`).not.toMatch(STILL_TO_PAY[language]);
    expect(header).toContain(texts.paymentAmount);
    // The page asks for the rest, and only for it.
    const page = textOf(html);
    expect(page).toContain(texts.statuses.partial);
    expect(page).toContain(`${texts.amountStillDue} ${due.toFixed()}`);
    expect(page).not.toContain(texts.exactAmount);
  });

  it.each([
    ["es", "es"],
    ["de", "de"],
    ["fr", "fr"],
    ["pt-BR", "pt-BR"],
  ] as const)("in %s, what arrived reads in the page's notation; the amount still due shows and copies as the gateway gave it", async (locale, language) => {
    const texts = pageTexts(language);
    const { pageUrl, arrived, due, percentage } = await partlyPaid(locale);
    expect(percentage).toMatch(/^\d+\.\d+$/);
    const comma = (value: string | null) => (value ?? "").replace(".", ",");
    const fiat = language === "pt-BR" ? `€${SPACE}24,50` : `24,50${SPACE}€`;
    // "Received: …", "Reçu : …" in French: the label as the page's language writes it.
    const label = fill(texts.labelled, { label: texts.received, value: "" });
    const received = new RegExp(`^${label}${comma(arrived.toFixed())} ETH \\(${fiat}; ${comma(percentage)}${SPACE}%\\)$`);

    const html = await served(pageUrl);
    const line = /<p class="muted">([^<]*)<\/p>/g;
    const shown = [...html.replace(/<!-- -->/g, "").matchAll(line)].map((m) => m[1]!).find((text) => text.startsWith(label));
    expect(shown).toMatch(received);
    expect(/<code id="remaining"[^>]*>([^<]*)<\/code>/.exec(html)?.[1]).toBe(due.toFixed());

    // In the browser, once the page's scripts run: the same, and the Copy button copies the gateway's text.
    const page = await browser().newPage({ viewport: PHONE });
    const copies = await recordCopies(page);
    try {
      await page.goto(pageUrl.toString(), { waitUntil: "load" });
      await waitForHydration(page);
      expect(await page.getByText(new RegExp(`^${label}`)).textContent()).toMatch(received);
      expect(await page.locator("#remaining").textContent()).toBe(due.toFixed());
      await page.getByRole("button", { name: fill(texts.labelled, { label: texts.copy, value: texts.amountStillDue }) }).click();
      await expect.poll(copies).toEqual([due.toFixed()]);
    } finally {
      await page.close();
    }
  }, 60_000);
});
