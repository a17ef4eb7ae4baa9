// A whole payment in real Chromium: the shopper pays from the checkout simulator on the
// gateway sandbox's page (chooses a coin, pays exactly), the network confirms it, the
// stand-in's order page ends paid, the reconciler's listing verifies it, and the merchant
// sees it paid in the admin's payment list and detail.
import { describe, expect, it } from "vitest";
import { reconcileOnce } from "../../app/payments/reconcile";
import { browserForFile, saveScreenshot } from "../support/browser";
import { stackForFile, waitFor } from "../support/stack";
import { DESKTOP, openAdmin, PHONE } from "./support/admin";
import { payFromCheckout } from "./support/checkout";
import { saveDocScreenshot } from "./support/screenshots";

const stack = stackForFile({ env: { DEV_ADMIN_LOGIN: "true" } });
const browser = browserForFile();

describe("a payment from checkout to paid", () => {
  it("pays on the gateway sandbox's page and shows the order paid in Shopify and in the admin", async () => {
    const shopper = await browser().newPage({ viewport: PHONE });
    const sessionId = await payFromCheckout(shopper, stack(), { amount: "49.90", currency: "EUR", locale: "en" }, async () => {
      expect(await shopper.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      await saveDocScreenshot(shopper, "checkout-simulator");
    });
    await shopper.waitForURL(`${stack().sandbox.origin}/pay/**`);
    const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: sessionId } });
    expect(payment.gatewayEnv).toBe("sandbox");
    expect(payment.gatewayOrderId).toBeTruthy();

    await shopper.getByRole("button", { name: "Bitcoin BTC (BTC)", exact: true }).click();
    await shopper.getByRole("button", { name: "Pay exactly" }).click();
    // Paid but unconfirmed: the gateway sends the shopper back while the network confirms.
    await shopper.waitForURL(`${stack().standin.origin}/orders/${sessionId}`, { timeout: 30_000 });
    await saveScreenshot(shopper, "checkout-payment-pending-order-page");

    // A block confirmation is the blockchain's doing, not the shopper's: the sandbox's control endpoint.
    await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "confirm" });
    await waitFor(async () => stack().standin.state.session(sessionId)?.state.code === "RESOLVED", "Shopify resolve", 30_000);
    await shopper.getByText("Thank you! Your order is confirmed.").waitFor({ timeout: 30_000 });
    await saveScreenshot(shopper, "checkout-payment-paid-order-page");
    expect(stack().standin.state.invalidOperations()).toEqual([]);

    // Settled from the signed webhooks alone (the shopper's return to wait read nothing): the
    // reconciler's next listing of the shop's orders verifies it and records the coin, its
    // amount and its transactions, as it does within the hour.
    expect((await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).unverifiedSince).not.toBeNull();
    await reconcileOnce(stack().services, { worker: "test", force: true });
    const paid = await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(paid.state).toBe("paid");
    expect(paid.gatewayStatus).toBe("CO");
    expect(paid.unverifiedSince).toBeNull();

    const merchant = await browser().newPage({ viewport: DESKTOP });
    await openAdmin(merchant, stack(), "/app/payments");
    const row = merchant.locator("tr", { hasText: sessionId });
    await row.waitFor();
    expect(await row.textContent()).toContain("49.90 EUR");
    expect(await row.textContent()).toContain("Paid");
    expect(await row.textContent()).toContain("Completed");
    expect(await row.textContent()).toContain(`${paid.cryptoAmount} BTC`);
    await saveDocScreenshot(merchant, "admin-payments");

    // The filters narrow the list: no expired payment exists.
    await merchant.getByLabel("Gateway status").selectOption("EX");
    await merchant.getByRole("button", { name: "Filter" }).click();
    await merchant.getByText("No payments match these filters.").waitFor();
    await merchant.getByLabel("Gateway status").selectOption("CO");
    await merchant.getByRole("button", { name: "Filter" }).click();
    await merchant.locator("tr", { hasText: sessionId }).waitFor();

    await merchant.getByRole("link", { name: sessionId }).click();
    await merchant.waitForURL(`**/app/payments/${payment.id}**`);
    await merchant.getByText("Paid in Shopify").waitFor();
    const detail = (await merchant.locator("main, body").first().textContent()) ?? "";
    expect(detail).toContain("Gateway: Completed");
    expect(detail).toContain("Shopify: marked as paid");
    // The gateway states the fiat received as a number (49.9); the admin writes it as money.
    expect(detail).toContain("Received49.90 EUR");
    const transactions = await stack().services.db.paymentTransaction.findMany({ where: { paymentId: payment.id } });
    expect(transactions.length).toBeGreaterThan(0);
    for (const transaction of transactions) expect(detail).toContain(transaction.txHash);
    await saveDocScreenshot(merchant, "admin-payment-detail");

    // "Check now" reads the order again and changes nothing for a settled payment (its last
    // read, the shopper's return, moved back past the spacing of the merchant's reads).
    await stack().services.db.payment.update({ where: { id: payment.id }, data: { lastCheckedAt: new Date(Date.now() - 60_000) } });
    await merchant.getByRole("button", { name: "Check now" }).click();
    await merchant.getByText("Checked with the gateway just now.").waitFor();
    expect((await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).state).toBe("paid");
  }, 180_000);
});
