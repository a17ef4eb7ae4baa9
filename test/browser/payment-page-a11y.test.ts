// The shopper's payment page for assistive technology, in a real Chromium:
// - a Copy button says (and announces) "Copied" only for the value it copied: after a partial
//   payment, the button beside the amount still due says "Copy", as the clipboard still holds
//   the full amount (a shopper who believed otherwise would send it again);
// - partly paid with the rest due not known yet, the announced status says so and not to send
//   the full amount again, instead of "Please send the rest";
// - the "link not valid" page declares on the document the language it is written in.
import type { Page } from "playwright-core";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Clock } from "../../app/payments/deps";
import { checkPaymentNow } from "../../app/payments/check-payment";
import { pageTexts } from "../../app/payment-page/texts";
import { browserForFile } from "../support/browser";
import { stackForFile, waitFor } from "../support/stack";
import { PHONE, waitForHydration } from "./support/admin";
import { recordCopies } from "./support/clipboard";

/** The app's clock: real time, or held still at `frozenAtMs`. */
let frozenAtMs: number | null = null;
const clock: Clock = { now: () => new Date(frozenAtMs ?? Date.now()) };
const stack = stackForFile({ clock });
const browser = browserForFile();
const en = pageTexts("en");

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

afterEach(() => {
  frozenAtMs = null;
});

/** A payment with `symbol` picked on the app's page: the page's link and the payment. */
async function picked(symbol: string, amount: string) {
  const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "en", amount, currency: "EUR" });
  const chosen = await fetch(delivery.redirectUrl!, { method: "POST", body: new URLSearchParams({ symbol }), redirect: "manual" });
  expect(chosen.status).toBe(303);
  const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  const act = (body: Record<string, unknown>) => stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, body);
  return { url: new URL(chosen.headers.get("location")!, delivery.redirectUrl!).toString(), payment, act };
}

/** The text of every live region on the page (what a screen reader announces as it changes). */
function liveRegionTexts(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll("[aria-live], [role=status], [role=alert], [role=log]")]
      .filter((e) => e.getAttribute("aria-live") !== "off")
      .map((e) => (e.textContent ?? "").trim())
      .filter(Boolean),
  );
}

describe("the payment page for assistive technology", () => {
  it("a Copy button does not say (or announce) 'Copied' for a value the shopper has not copied: after a partial payment, 'Amount still to send' reads 'Copy' (WCAG 4.1.2, 4.1.3; harm: the shopper pastes the full amount again and overpays)", async () => {
    const { url, payment, act } = await picked("ETH", "49.00");
    const page = await browser().newPage({ viewport: PHONE });
    const copies = await recordCopies(page);
    try {
      await page.goto(url, { waitUntil: "load" });
      await waitForHydration(page);
      // The shopper copies the exact amount into their wallet; the wallet takes its fee from it.
      await page.getByRole("button", { name: `${en.copy}: ${en.exactAmount}` }).click();
      await page.getByRole("button", { name: `${en.copied}: ${en.exactAmount}` }).waitFor();
      await act({ action: "pay", amount: "less" });
      await expect.poll(() => page.getByRole("status").first().textContent(), { timeout: 30_000 }).toBe(en.statuses.partial);
      const remaining = (await page.locator("#remaining").textContent())!;
      // The clipboard still holds the full amount, not the rest now asked for.
      expect(await copies()).toEqual([payment.cryptoAmount]);
      expect(remaining).not.toBe(payment.cryptoAmount);

      const restButton = page.locator("#remaining").locator("xpath=..").locator("button.copy");
      const seen = {
        buttonName: await restButton.getAttribute("aria-label"),
        buttonText: (await restButton.textContent())?.trim(),
        announced: (await liveRegionTexts(page)).filter((text) => text.startsWith(en.copied)),
      };
      expect(seen, "the rest due has not been copied: its button must offer to copy it, and nothing may announce it as copied").toEqual({
        buttonName: `${en.copy}: ${en.amountStillDue}`,
        buttonText: en.copy,
        announced: [],
      });
    } finally {
      await page.close();
    }
  }, 120_000);

  it("partly paid with the rest due not known yet: the announced status does not tell the shopper to send the rest, and the warning not to send the full amount again is announced (WCAG 4.1.3, 3.3.2; harm: a screen-reader user resends the full amount)", async () => {
    const { url, payment, act } = await picked("ETH", "49.00");
    const page = await browser().newPage({ viewport: PHONE });
    try {
      await page.goto(url, { waitUntil: "load" });
      await waitForHydration(page);
      expect(await page.getByRole("status").first().textContent()).toBe(en.statuses.waiting);

      // Hold the page's live status until the app holds what a read with a percentage under 100
      // and no transactions yet gives (as in test/browser/payment-page-after-payment.test.ts).
      let blocked = true;
      await page.route("**/status?**", (route) => (blocked ? route.abort() : route.continue()));
      await act({ action: "pay", amount: "less" });
      await checkPaymentNow(stack().services, payment.shopId, payment.id);
      await waitFor(async () => (await stack().services.db.gatewayWebhook.count({ where: { processedAt: null } })) === 0, "an idle inbox");
      frozenAtMs = Date.now();
      await stack().services.db.payment.update({ where: { id: payment.id }, data: { lastCheckedAt: new Date(frozenAtMs) } });
      await stack().services.db.paymentTransaction.deleteMany({ where: { paymentId: payment.id } });
      blocked = false;

      // The page follows the payment on its own: this is what a sighted shopper now reads.
      await page.getByText(en.restUnknown).waitFor({ timeout: 30_000 });
      expect(await page.locator("#remaining, #amount, .qr").count()).toBe(0);

      const announced = (await liveRegionTexts(page)).join(" ");
      expect(
        {
          asksToSendTheRest: announced.includes("Please send the rest"),
          warnsNotToSendAgain: announced.includes("Please do not send the full amount again"),
        },
        `announced: "${announced}"`,
      ).toEqual({ asksToSendTheRest: false, warnsNotToSendAgain: true });
    } finally {
      await page.close();
    }
  }, 120_000);

  it("the 'link not valid' page declares the language it is written in on the document, not English (WCAG 3.1.1)", async () => {
    const { delivery } = await stack().standin.state.startPayment({ test: true, locale: "en" });
    const link = new URL(delivery.redirectUrl!);
    const forged = `${link.origin}${link.pathname}?sig=${"A".repeat(43)}`;
    const seen: Record<string, { document: string; content: string; title: string }> = {};
    for (const language of ["es", "pt", "pt-BR", "it", "fr", "de"]) {
      const page = await browser().newPage({ viewport: PHONE, extraHTTPHeaders: { "accept-language": language } });
      try {
        await page.goto(forged, { waitUntil: "load" });
        seen[language] = {
          document: await page.evaluate(() => document.documentElement.lang),
          content: (await page.locator(".pp").getAttribute("lang")) ?? "",
          title: await page.title(),
        };
      } finally {
        await page.close();
      }
    }
    for (const [language, { title }] of Object.entries(seen)) expect(title, language).toBe(pageTexts(language as "de").linkNotValid.title);
    const declared = Object.fromEntries(Object.entries(seen).map(([language, s]) => [language, { document: s.document, content: s.content }]));
    // Portugal's Portuguese is declared as such ("pt-PT"), so a screen reader picks its voice, not Brazil's.
    const tag = (language: string) => (language === "pt" ? "pt-PT" : language);
    const expected = Object.fromEntries(Object.keys(seen).map((language) => [language, { document: tag(language), content: tag(language) }]));
    expect(declared).toEqual(expected);
  }, 120_000);
});
