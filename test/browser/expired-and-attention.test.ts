// Payments that end without being paid, in real Chromium: the shopper lets the order
// expire on the gateway sandbox's page and ends on Shopify's side with the payment
// rejected, which the admin shows as expired; an underpaid order is flagged on the
// "Needs attention" page with what to do, until the merchant marks it as handled (focus then
// goes to the outcome, the card being gone); the
// health page shows the notifications that arrived.
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { browserForFile, saveScreenshot } from "../support/browser";
import { stackForFile, waitFor } from "../support/stack";
import { DESKTOP, openAdmin, PHONE } from "./support/admin";
import { payFromCheckout } from "./support/checkout";

const stack = stackForFile({ env: { DEV_ADMIN_LOGIN: "true" } });
const browser = browserForFile();

/** The text of the element holding the focus; "" when it is the document's body (nowhere). */
function focusedText(page: Page): Promise<string> {
  return page.evaluate(() => (document.activeElement && document.activeElement !== document.body ? (document.activeElement.textContent ?? "") : ""));
}

describe("payments that end unpaid", () => {
  it("an expired order sends the shopper to Shopify with the payment rejected, and the admin shows it expired", async () => {
    const shopper = await browser().newPage({ viewport: PHONE });
    const sessionId = await payFromCheckout(shopper, stack(), { amount: "20.00", currency: "EUR", locale: "en" });
    await shopper.waitForURL(`${stack().sandbox.origin}/pay/**`);
    await shopper.getByRole("button", { name: "Litecoin LTC (LTC)", exact: true }).click();
    await shopper.getByRole("button", { name: "Let it expire now" }).click();

    await shopper.waitForURL(`${stack().standin.origin}/orders/${sessionId}`, { timeout: 30_000 });
    await shopper.getByText("Your payment could not be processed.").waitFor({ timeout: 30_000 });
    await saveScreenshot(shopper, "expired-shopper-back-in-shop");
    const session = stack().standin.state.session(sessionId);
    expect(session?.state.code).toBe("REJECTED");
    expect(session?.state).toMatchObject({ reason: "CANCELLED_PAYMENT" });

    const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: sessionId } });
    expect(payment).toMatchObject({ state: "failed", gatewayStatus: "EX", shopifyOutcome: "rejected" });
    expect(payment.attention).toBeNull();

    const merchant = await browser().newPage({ viewport: DESKTOP });
    await openAdmin(merchant, stack(), "/app/payments?status=EX");
    const row = merchant.locator("tr", { hasText: sessionId });
    await row.waitFor();
    expect(await row.textContent()).toContain("Expired");
    expect(await row.textContent()).toContain("Not paid");

    await merchant.getByRole("link", { name: sessionId }).click();
    await merchant.getByText("Not paid in Shopify").waitFor();
    const detail = (await merchant.locator("body").textContent()) ?? "";
    expect(detail).toContain("Gateway: Expired");
    expect(detail).toContain("Shopify: marked as not paid");
    await saveScreenshot(merchant, "expired-admin-detail");
  }, 180_000);

  it("flags an underpaid order with what to do, until the merchant marks it as handled", async () => {
    const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "en", amount: "30.00", currency: "EUR" });
    expect(delivery.status).toBe(200);
    const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
    const act = (body: Record<string, unknown>) => stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, body);
    await act({ action: "choose_currency", currency: "BTC" });
    await act({ action: "pay", amount: "less" });
    await act({ action: "confirm" });
    await waitFor(async () => (await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).attention === "underpaid", "the underpaid flag", 30_000);

    const merchant = await browser().newPage({ viewport: DESKTOP });
    await openAdmin(merchant, stack(), "/app/attention");
    const card = merchant.getByRole("article", { name: "Shopper paid too little: 30.00 EUR" });
    await card.waitFor();
    expect(await card.textContent()).toContain("30.00 EUR");
    expect(await card.textContent()).toContain("refund it from the gateway dashboard");
    await saveScreenshot(merchant, "attention-underpaid");

    // From the keyboard: the card and its button leave the page, and focus goes to the outcome.
    await card.getByRole("button", { name: "Mark as handled" }).focus();
    await merchant.keyboard.press("Enter");
    await merchant.getByText("Nothing needs attention right now.").waitFor();
    expect(await focusedText(merchant)).toContain("Marked as handled.");
    const handled = await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(handled.attentionResolvedAt).not.toBeNull();
    expect(handled.attention).toBe("underpaid");

    // The same on the payment's own page, whose flag banner (and button) goes too.
    await stack().services.db.payment.update({ where: { id: payment.id }, data: { attentionResolvedAt: null } });
    await openAdmin(merchant, stack(), `/app/payments/${payment.id}`);
    await merchant.getByRole("button", { name: "Mark as handled" }).focus();
    await merchant.keyboard.press("Enter");
    await merchant.getByRole("button", { name: "Mark as handled" }).waitFor({ state: "detached" });
    expect(await focusedText(merchant)).toContain("Marked as handled.");
  }, 120_000);

  it("shows on the health page when the last notification arrived and how much quota is left", async () => {
    const merchant = await browser().newPage({ viewport: DESKTOP });
    await openAdmin(merchant, stack(), "/app/health");
    await merchant.getByRole("heading", { name: "Gateway notifications" }).waitFor();
    const text = (await merchant.locator("body").textContent()) ?? "";
    expect(text).not.toContain("Last one receivednever");
    expect(text).toMatch(/\d+ seconds ago|\d+ minutes ago/);
    expect(text).toContain("Gateway sandbox (test mode)");
    await saveScreenshot(merchant, "admin-health");
  }, 60_000);
});
