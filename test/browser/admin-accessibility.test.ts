// Accessibility basics of the merchant admin, in real Chromium through the development login:
// each page has one h1 and no form control without a name, and an error about a field is
// tied to that field (marked invalid, with the message as its description).
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { browserForFile } from "../support/browser";
import { stackForFile } from "../support/stack";
import { DESKTOP, openAdmin } from "./support/admin";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
const browser = browserForFile();
let page: Page;

beforeAll(async () => {
  stack().logger.info("admin-accessibility: started");
  page = await browser().newPage({ viewport: DESKTOP });
});

/** Visible form controls without an accessible name, described by tag and name attribute. */
function unnamedControls(target: Page): Promise<string[]> {
  return target.locator("input:not([type=hidden]), select, textarea, button").evaluateAll((elements) =>
    elements
      .filter((el) => (el as HTMLElement).offsetParent !== null)
      .filter((el) => {
        const labelled = (el as HTMLInputElement).labels?.length;
        const aria = el.getAttribute("aria-label") || el.getAttribute("aria-labelledby");
        const text = el.tagName === "BUTTON" ? (el.textContent ?? "").trim() : "";
        return !labelled && !aria && !text;
      })
      .map((el) => `${el.tagName.toLowerCase()}[name=${el.getAttribute("name")}]`),
  );
}

/** What describes a field to a screen reader: the texts its aria-describedby names. */
async function descriptionOf(label: string): Promise<string> {
  const ids = ((await page.getByLabel(label).getAttribute("aria-describedby")) ?? "").split(/\s+/).filter(Boolean);
  const texts = await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).textContent()));
  return texts.join(" ");
}

describe("admin accessibility basics", () => {
  it("every page has one h1 and no unnamed form control", async () => {
    const shop = await stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
    const payment = await stack().services.db.payment.create({
      data: {
        shopId: shop.id, shopifyPaymentId: "a11y-1", gid: "gid://shopify/PaymentSession/a11y-1", groupId: "g-a11y-1", amount: "1500", currency: "JPY",
        test: true, kind: "sale", cancelUrl: "https://shop.example/cancel", gatewayEnv: "sandbox", state: "failed", gatewayStatus: "IA", attention: "underpaid",
      },
    });
    for (const path of ["/app", "/app/payments", `/app/payments/${payment.id}`, "/app/attention", "/app/settings", "/app/onboarding", "/app/health", "/app/data-requests"]) {
      await openAdmin(page, stack(), path);
      expect(await page.locator("h1").count(), `${path}: h1 count`).toBe(1);
      expect(await unnamedControls(page), path).toEqual([]);
    }
  }, 120_000);

  it("a refused device key is tied to its field", async () => {
    await openAdmin(page, stack(), "/app/onboarding");
    await page.getByLabel("Device API key").fill("not a key!");
    await page.getByLabel("Secret Key").fill("ab".repeat(32));
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await page.getByText("The device API key has characters a key never has").first().waitFor();
    expect(await page.getByLabel("Device API key").getAttribute("aria-invalid")).toBe("true");
    expect(await descriptionOf("Device API key")).toContain("The device API key has characters a key never has");
  }, 60_000);
});
