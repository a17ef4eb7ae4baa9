// The shopper's page, while the order cannot be read, decides from the verified AC
// notification whether the whole crypto amount arrived. Coin amounts carry more digits than
// decimal.js keeps by default (20 significant): an 18-decimal token with a whole part of 3+
// digits. The notification's amounts are summed exactly, so a shopper who sent the exact amount
// is not told only part of it arrived. Real stack, the sandbox's order reads failing.
import { beforeAll, describe, expect, it } from "vitest";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { coinPickedOnAppPage, sendGatewayWebhook, stackForFile, waitFor } from "../support/stack";

const stack = stackForFile();
const db = () => stack().services.db;

beforeAll(async () => {
  await db().shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

async function secretKey(): Promise<string> {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  return stack().services.cipher.decrypt(shop.sandboxSecretKeyEnc!, credentialContext(shop.id, "sandbox", "secret-key"));
}

describe("a verified AC notification of the whole amount, while the order cannot be read", () => {
  it.each([
    // 17 significant digits (a float's): summed exactly either way.
    ["0.012345678901234567", "0.012345678901234567", "0.0"],
    // 22 significant digits: the default precision rounds the sum (down here) below the amount.
    ["1234.123456789012345641", "1234.123456789012345641", "0.0"],
    // The same amount in two parts, one confirmed and one not.
    ["1234.123456789012345641", "1000.000000000000000001", "234.12345678901234564"],
  ])("crypto %s, unconfirmed %s, confirmed %s: the page says it is confirming, not that part arrived", async (crypto, unconfirmed, confirmed) => {
    const { pageUrl, payment } = await coinPickedOnAppPage(stack(), { locale: "en", amount: "30.00", currency: "EUR" });
    const orderId = payment.gatewayOrderId!;

    await stack().sandboxControl("/sandbox/faults", { endpoint: "orders.info", kind: "http_500", count: 50 });
    try {
      const body = `{"identifier": "${orderId}", "status": "AC", "fiat_amount": 30.0, "fiat_currency": "EUR", "currency": "ETH", "crypto_amount": ${crypto}, "unconfirmed_amount": ${unconfirmed}, "confirmed_amount": ${confirmed}, "safe": false}`;
      expect(await sendGatewayWebhook(stack(), await secretKey(), body)).toBe(200);
      await waitFor(async () => (await db().gatewayWebhook.count({ where: { orderId, status: "AC", processedAt: { not: null } } })) > 0 || null, "the AC notification taken in");
      await db().payment.update({ where: { id: payment.id }, data: { lastCheckedAt: new Date(Date.now() - 20_000) } });
      const page = new URL(pageUrl);
      const status = (await (await fetch(`${page.origin}${page.pathname}/status${page.search}`)).json()) as { status: string };
      const stored = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
      expect(stored.state).toBe("awaiting_payment");
      // The notified amounts add up to exactly the crypto amount: all of it arrived.
      expect(status.status).toBe("confirming");
    } finally {
      await stack().sandboxControl("/sandbox/faults", undefined, "DELETE");
    }
  }, 60_000);
});
