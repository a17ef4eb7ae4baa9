// The app's payment page on phones (320, 360 and 390 px wide), in English and German (its
// longest labels), for the coins with the longest symbols and the coins with a tag/memo, and
// for the rest still due after a partial payment: nothing overflows sideways, and each value
// to copy has a line of its own — the amount and the tag/memo whole on one line, never
// broken, never cut — with the coin and the Copy button below it.
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { checkPaymentNow } from "../../app/payments/check-payment";
import { browserForFile, saveScreenshot } from "../support/browser";
import { stackForFile } from "../support/stack";

const stack = stackForFile();
const browser = browserForFile();
const WIDTHS = [320, 360, 390] as const;
const LONG_SYMBOLS = ["USDC_POLYGON", "USDT_TRC20", "USDC_ERC20"];
const MEMO_COINS = ["XRP", "XLM", "ALGO"];

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

/** The page of a payment with `symbol` chosen; `partly` sends about half first, so the page asks for the rest. */
async function payPage(symbol: string, locale: string, partly = false): Promise<string> {
  const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale, amount: "49.90", currency: "EUR" });
  const chosen = await fetch(delivery.redirectUrl!, { method: "POST", body: new URLSearchParams({ symbol }), redirect: "manual" });
  expect(chosen.status).toBe(303);
  if (partly) {
    const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
    await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "pay", amount: "less" });
    await checkPaymentNow(stack().services, payment.shopId, payment.id);
  }
  return new URL(chosen.headers.get("location")!, delivery.redirectUrl!).toString();
}

interface ValueLayout {
  text: string;
  /** Lines the value's text takes. */
  lines: number;
  /** Whether all of it is in view (not cut off inside its box). */
  whole: boolean;
  /** Whether the coin and the Copy button sit below the value, not beside it. */
  controlsBelow: boolean;
}

/** How the page lays out at the page's current width: what overflows sideways, and each value to copy. */
function measure(page: Page, ids: string[]) {
  return page.evaluate((valueIds) => {
    const width = window.innerWidth;
    const wide = [...document.querySelectorAll("body *")]
      .filter((e) => e.getBoundingClientRect().right > width + 0.5)
      .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}`);
    const values: Record<string, ValueLayout | null> = {};
    for (const id of valueIds) {
      const element = document.getElementById(id);
      if (!element) {
        values[id] = null;
        continue;
      }
      const range = document.createRange();
      range.selectNodeContents(element);
      const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
      const bottom = element.getBoundingClientRect().bottom;
      const controls = [...(element.parentElement?.querySelectorAll(".copyrow > *:not(.sr-only)") ?? [])];
      values[id] = {
        text: element.textContent ?? "",
        lines: tops.size,
        whole: element.scrollWidth <= element.clientWidth,
        controlsBelow: controls.length > 0 && controls.every((c) => c.getBoundingClientRect().top >= bottom - 0.5),
      };
    }
    return { scrollWidth: document.documentElement.scrollWidth, wide, values };
  }, ids);
}

async function checkAtEveryWidth(url: string, name: string, ids: string[]) {
  const page = await browser().newPage({ viewport: { width: WIDTHS[0], height: 800 } });
  await page.goto(url, { waitUntil: "load" });
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 800 });
    const seen = await measure(page, ids);
    if (width === WIDTHS[0]) await saveScreenshot(page, `payment-page-${name}-${width}`);
    expect({ width, scrollWidth: seen.scrollWidth, wide: seen.wide }).toEqual({ width, scrollWidth: width, wide: [] });
    for (const id of ids) {
      const value = seen.values[id];
      expect(value, `${id} at ${width} px`).not.toBeNull();
      expect({ width, id, lines: value!.lines, whole: value!.whole, controlsBelow: value!.controlsBelow }).toEqual({ width, id, lines: 1, whole: true, controlsBelow: true });
    }
  }
  await page.close();
}

describe("the payment page on phones", () => {
  const cases = ["en", "de"].flatMap((locale) => [
    ...LONG_SYMBOLS.map((symbol) => ({ locale, symbol, ids: ["amount"], what: "the amount" })),
    ...MEMO_COINS.map((symbol) => ({ locale, symbol, ids: ["amount", "tag-memo"], what: "the amount and the tag/memo each" })),
  ]);

  it.each(cases)("$locale, $symbol: fits 320, 360 and 390 px, with $what whole on a line of its own", async ({ locale, symbol, ids }) => {
    await checkAtEveryWidth(await payPage(symbol, locale), `${locale}-${symbol}`, ids);
  }, 60_000);

  it.each(["en", "de"])("%s: the rest still due after a partial payment fits too, whole on a line of its own", async (locale) => {
    await checkAtEveryWidth(await payPage("USDC_POLYGON", locale, true), `${locale}-partial`, ["remaining"]);
  }, 60_000);

  it.each(["en", "de"])("%s: a Lightning invoice wraps within the screen", async (locale) => {
    await checkAtEveryWidth(await payPage("BTCL", locale), `${locale}-lightning`, []);
  }, 60_000);
});
