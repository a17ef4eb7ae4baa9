// Shopify's HMAC signs a webhook's body only: X-Shopify-Triggered-At is not signed. Anyone
// holding a body Shopify once delivered for a shop (a log, a proxy) can post it again with a
// fresh Triggered-At, which the install-time comparisons alone take for an uninstall of the
// current install. Before it uninstalls or deletes a shop its row says is installed, the app
// asks Shopify (the stand-in) whether it still takes the shop's token: Shopify revokes an
// app's tokens at an uninstall. On both databases, through the real routes.
import { describe, expect, it } from "vitest";
import { sendShopifyWebhook, shopHoldings, shopRedactBody, uninstalledBody } from "../support/shopify-webhooks";
import { stackOnDatabase, type Stack } from "../support/stack";

const checksOfToken = (stack: Stack) => stack.standin.state.operations().filter((o) => o.operationName === "PublicApiVersions");

describe.each(["sqlite", "postgresql"] as const)("on %s", (kind) => {
  const stack = stackOnDatabase(kind, { workers: false });

  it("an app/uninstalled body posted again with a fresh Triggered-At, for an installed shop whose token Shopify takes, changes nothing", async () => {
    const { delivery } = await stack().standin.state.startPayment({ test: true });
    expect(delivery.status).toBe(200);
    const before = await shopHoldings(stack());
    expect(before).toMatchObject({ row: true, uninstalled: false, sandboxCredentials: true, offlineTokens: 1 });
    const checks = checksOfToken(stack()).length;

    const replay = await sendShopifyWebhook(stack(), "app/uninstalled", uninstalledBody(stack().shopDomain), { triggeredAt: new Date(Date.now() + 1_000) });
    expect(replay.status).toBe(200);
    expect(await shopHoldings(stack())).toEqual(before);
    // Shopify was asked, and took the token.
    expect(checksOfToken(stack()).slice(checks).map((o) => o.status)).toEqual([200]);
    // Checkout still offers the method: the next payment session is taken.
    expect((await stack().standin.state.startPayment({ test: true })).delivery.status).toBe(200);
  }, 60_000);

  it("a shop/redact body posted again with a fresh Triggered-At, for an installed shop whose token Shopify takes, deletes nothing", async () => {
    expect((await stack().standin.state.startPayment({ test: true })).delivery.status).toBe(200);
    const before = await shopHoldings(stack());
    expect(before).toMatchObject({ row: true, uninstalled: false });
    expect(before.payments).toBeGreaterThan(0);
    // Far enough ahead that the uninstall it would follow (48 hours earlier) is after the install.
    const replay = await sendShopifyWebhook(stack(), "shop/redact", shopRedactBody(stack().shopDomain), { triggeredAt: new Date(Date.now() + 49 * 3_600_000) });
    expect(replay.status).toBe(200);
    expect(await shopHoldings(stack())).toEqual(before);
  }, 60_000);

  it.each(["http_500", "http_429", "network", "http_402", "http_423"] as const)(
    "when Shopify cannot say (%s), both are taken and held to be asked about again, and nothing changes yet",
    async (mode) => {
      const before = await shopHoldings(stack());
      for (const [topic, body] of [["app/uninstalled", uninstalledBody(stack().shopDomain)], ["shop/redact", shopRedactBody(stack().shopDomain)]] as const) {
        stack().standin.state.setFault({ mode, count: 1 });
        const answer = await sendShopifyWebhook(stack(), topic, body, { triggeredAt: new Date(Date.now() + 49 * 3_600_000) });
        expect(answer.status, topic).toBe(200);
        expect(await shopHoldings(stack()), topic).toEqual(before);
      }
      stack().standin.state.clearFaults();
      const heldWebhooks = await stack().services.db.unconfirmedUninstall.findMany({ where: { shop: { shopDomain: stack().shopDomain } }, orderBy: { topic: "asc" } });
      expect(heldWebhooks.map((h) => h.topic)).toEqual(["app/uninstalled", "shop/redact"]);
      // Left for the next case as it found the shop.
      await stack().services.db.unconfirmedUninstall.deleteMany();
    },
    60_000,
  );

  it("a real uninstall (Shopify revoked the app's tokens) is carried out, and the shop/redact that follows deletes the shop", async () => {
    stack().standin.state.uninstallApp();
    const uninstall = await sendShopifyWebhook(stack(), "app/uninstalled", uninstalledBody(stack().shopDomain));
    expect(uninstall.status).toBe(200);
    expect(await shopHoldings(stack())).toMatchObject({ row: true, uninstalled: true, sandboxCredentials: false, ready: false, offlineTokens: 0 });
    expect((await stack().standin.state.startPayment({ test: true })).delivery.status).toBe(422);

    const redact = await sendShopifyWebhook(stack(), "shop/redact", shopRedactBody(stack().shopDomain));
    expect(redact.status).toBe(200);
    expect(await shopHoldings(stack())).toMatchObject({ row: false, offlineTokens: 0, payments: 0 });
  }, 60_000);
});
