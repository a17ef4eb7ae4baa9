// An app/uninstalled or shop/redact for a shop whose row says it is installed is carried out only
// once Shopify refuses the shop's token (replayed-uninstall.test.ts). When Shopify cannot say,
// because the shop is frozen (402) or locked (423) or Shopify is out of reach, the webhook is
// taken and held, and the readiness pass asks again every hour until Shopify answers: Shopify
// gives up delivering a webhook after a few hours of errors, and a frozen shop can stay frozen
// for weeks, so an error answer would keep the shop's gateway credentials, or its data, for good.
// Shopify slower to answer than it waits for the webhook's own answer counts as not saying.
// On both databases, through the real routes, with the app's clock moved.
import { describe, expect, it } from "vitest";
import { recheckUnconfirmedUninstalls, UNCONFIRMED_REDACT_LIMIT_MS, UNCONFIRMED_UNINSTALL_LIMIT_MS, UNCONFIRMED_UNINSTALL_RECHECK_MS } from "../../app/shops/shopify-webhooks.server";
import { sessionTokenContext } from "../../app/shops/shopify-sessions.server";
import { sealedUnderDroppedKey } from "../support/dropped-key";
import { sendShopifyWebhook, shopHoldings, shopRedactBody, uninstalledBody } from "../support/shopify-webhooks";
import { movingClock, stackOnDatabase, type Stack } from "../support/stack";

const heldWebhooks = (stack: Stack) =>
  stack.services.db.unconfirmedUninstall.findMany({ orderBy: { topic: "asc" }, select: { topic: true, triggeredAt: true, checks: true } });

const asksOfToken = (stack: Stack) => stack.standin.state.operations().filter((o) => o.operationName === "PublicApiVersions");

describe.each(["sqlite", "postgresql"] as const)("on %s", (kind) => {
  const time = movingClock(() => stack());
  const stack = stackOnDatabase(kind, { workers: false, clock: time.clock });
  const recheck = () => recheckUnconfirmedUninstalls(stack().services);

  it("an uninstall held while Shopify was out of reach is dropped when Shopify, asked again, still takes the token (a replay)", async () => {
    expect((await stack().standin.state.startPayment({ test: true })).delivery.status).toBe(200);
    const before = await shopHoldings(stack());
    stack().standin.state.setFault({ mode: "http_500", count: 1 });
    expect((await sendShopifyWebhook(stack(), "app/uninstalled", uninstalledBody(stack().shopDomain))).status).toBe(200);
    expect((await heldWebhooks(stack())).map((h) => h.topic)).toEqual(["app/uninstalled"]);

    // Not asked again within the hour.
    const asks = asksOfToken(stack()).length;
    expect(await recheck()).toEqual({ settled: 0, unconfirmed: 0, failed: 0 });
    expect(asksOfToken(stack()).length).toBe(asks);

    // A check that fails (here the token's lookup) counts as a check: the row waits its hour
    // again instead of coming first in every pass.
    time.advanceAppOnly(UNCONFIRMED_UNINSTALL_RECHECK_MS);
    const failing = { ...stack().services, shopify: { ...stack().services.shopify, forShop: () => Promise.reject(new Error("the session storage is down")) } };
    expect(await recheckUnconfirmedUninstalls(failing)).toEqual({ settled: 0, unconfirmed: 0, failed: 1 });
    expect((await heldWebhooks(stack()))[0]?.checks).toBe(2);
    expect(await recheck()).toEqual({ settled: 0, unconfirmed: 0, failed: 0 });

    time.advanceAppOnly(UNCONFIRMED_UNINSTALL_RECHECK_MS);
    expect(await recheck()).toEqual({ settled: 1, unconfirmed: 0, failed: 0 });
    expect(asksOfToken(stack()).slice(asks).map((o) => o.status)).toEqual([200]);
    expect(await heldWebhooks(stack())).toEqual([]);
    expect(await shopHoldings(stack())).toEqual(before);
    expect((await stack().standin.state.startPayment({ test: true })).delivery.status).toBe(200);
  }, 60_000);

  it("an uninstall is held, not left unanswered, when Shopify is slower to say than Shopify waits for the webhook's answer", async () => {
    const before = await shopHoldings(stack());
    // Shopify would say the token works (a replay), but only after 8 s: past the 5 s Shopify
    // gives the webhook, it would count the delivery as failed.
    stack().standin.state.setFault({ mode: "slow", count: 1, delayMs: 8_000 });
    expect((await sendShopifyWebhook(stack(), "app/uninstalled", uninstalledBody(stack().shopDomain))).status).toBe(200);
    expect((await heldWebhooks(stack())).map((h) => h.topic)).toEqual(["app/uninstalled"]);
    expect(await shopHoldings(stack())).toEqual(before);

    // Asked again an hour later, Shopify answers at once: the token works, and nothing is uninstalled.
    time.advanceAppOnly(UNCONFIRMED_UNINSTALL_RECHECK_MS);
    expect(await recheck()).toEqual({ settled: 1, unconfirmed: 0, failed: 0 });
    expect(await heldWebhooks(stack())).toEqual([]);
    expect(await shopHoldings(stack())).toEqual(before);
  }, 60_000);

  it("an uninstall for a shop whose stored token cannot be opened (a key dropped too early) is held, not taken for a shop without a token", async () => {
    const db = stack().services.db;
    const before = await shopHoldings(stack());
    const session = await db.session.findFirstOrThrow({ where: { shop: stack().shopDomain, isOnline: false } });
    const unreadable = sealedUnderDroppedKey(stack().services.cipher.encrypt(session.accessToken, sessionTokenContext(session.id, "access-token")));
    await db.session.update({ where: { id: session.id }, data: { accessToken: unreadable } });
    expect((await sendShopifyWebhook(stack(), "app/uninstalled", uninstalledBody(stack().shopDomain))).status).toBe(200);
    expect(await shopHoldings(stack())).toEqual(before);
    expect((await heldWebhooks(stack())).map((h) => h.topic)).toEqual(["app/uninstalled"]);

    // The key is back: asked an hour later, Shopify takes the token, and nothing is uninstalled.
    await db.session.update({ where: { id: session.id }, data: { accessToken: session.accessToken } });
    time.advanceAppOnly(UNCONFIRMED_UNINSTALL_RECHECK_MS);
    expect(await recheck()).toEqual({ settled: 1, unconfirmed: 0, failed: 0 });
    expect(await heldWebhooks(stack())).toEqual([]);
    expect(await shopHoldings(stack())).toEqual(before);
  }, 60_000);

  it("a frozen shop's uninstall and a locked shop's redaction are held while Shopify cannot say, and carried out on their own word after 30 days (the redaction as soon as the uninstall is recorded)", async () => {
    const before = await shopHoldings(stack());
    expect(before).toMatchObject({ row: true, uninstalled: false, sandboxCredentials: true, offlineTokens: 1 });
    expect(before.payments).toBeGreaterThan(0);
    const uninstalledAt = new Date(time.clock.now().getTime() - 60_000);

    // Frozen: taken, held with its Triggered-At, nothing changed yet.
    stack().standin.state.setFault({ mode: "http_402", count: 1_000 });
    expect((await sendShopifyWebhook(stack(), "app/uninstalled", uninstalledBody(stack().shopDomain), { triggeredAt: uninstalledAt })).status).toBe(200);
    expect(await shopHoldings(stack())).toEqual(before);
    expect(await heldWebhooks(stack())).toEqual([{ topic: "app/uninstalled", triggeredAt: uninstalledAt, checks: 1 }]);

    // An hour on, still frozen: asked again, still held. Shopify's own redelivery, with a later
    // Triggered-At, counts as a check, and its time is kept.
    time.advanceAppOnly(UNCONFIRMED_UNINSTALL_RECHECK_MS);
    expect(await recheck()).toEqual({ settled: 0, unconfirmed: 1, failed: 0 });
    const redelivered = new Date(uninstalledAt.getTime() + 1_000);
    expect((await sendShopifyWebhook(stack(), "app/uninstalled", uninstalledBody(stack().shopDomain), { triggeredAt: redelivered })).status).toBe(200);
    expect((await sendShopifyWebhook(stack(), "app/uninstalled", uninstalledBody(stack().shopDomain), { triggeredAt: uninstalledAt })).status).toBe(200);
    expect(await heldWebhooks(stack())).toEqual([{ topic: "app/uninstalled", triggeredAt: redelivered, checks: 4 }]);

    // Locked now, and the redaction 48 hours after the uninstall comes: held beside it.
    time.advanceAppOnly(48 * 3_600_000);
    stack().standin.state.setFault({ mode: "http_423", count: 1_000 });
    const redactionAt = new Date(uninstalledAt.getTime() + 48 * 3_600_000);
    expect((await sendShopifyWebhook(stack(), "shop/redact", shopRedactBody(stack().shopDomain), { triggeredAt: redactionAt })).status).toBe(200);
    expect(await shopHoldings(stack())).toEqual(before);
    expect((await heldWebhooks(stack())).map((h) => h.topic)).toEqual(["app/uninstalled", "shop/redact"]);

    // Still locked just short of 30 days after the first was held: both still held.
    time.advanceAppOnly(UNCONFIRMED_UNINSTALL_LIMIT_MS - 49 * 3_600_000 - 60_000);
    expect(await recheck()).toEqual({ settled: 0, unconfirmed: 2, failed: 0 });
    expect(await shopHoldings(stack())).toEqual(before);

    // Past 30 days for the uninstall: carried out on its own word. The redaction, checked after
    // it in the same pass, then finds the uninstall recorded, is not asked about, and deletes
    // the shop's data.
    time.advanceAppOnly(2 * UNCONFIRMED_UNINSTALL_RECHECK_MS);
    expect(await recheck()).toEqual({ settled: 2, unconfirmed: 0, failed: 0 });
    expect(await shopHoldings(stack())).toEqual({ row: false, uninstalled: false, sandboxCredentials: false, ready: null, offlineTokens: 0, payments: 0 });
    expect(await heldWebhooks(stack())).toEqual([]);
    expect(await recheck()).toEqual({ settled: 0, unconfirmed: 0, failed: 0 });
    stack().standin.state.clearFaults();
  }, 60_000);
});

// A shop of its own: the redaction deletes it.
describe.each(["sqlite", "postgresql"] as const)("on %s, a redaction alone", (kind) => {
  const time = movingClock(() => stack());
  const stack = stackOnDatabase(kind, { workers: false, clock: time.clock });
  const recheck = () => recheckUnconfirmedUninstalls(stack().services);

  it("a redaction held alone (its uninstall lost) while the shop stays locked is carried out within the 30 days Shopify gives it, checks an hour apart included", async () => {
    const before = await shopHoldings(stack());
    expect(before).toMatchObject({ row: true, uninstalled: false });
    const received = time.clock.now().getTime();
    // Installed a week before the uninstall the redaction follows, 48 hours before it.
    await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { installedAt: new Date(received - 9 * 24 * 3_600_000) } });
    stack().standin.state.setFault({ mode: "http_423", count: 1_000 });
    expect((await sendShopifyWebhook(stack(), "shop/redact", shopRedactBody(stack().shopDomain), { triggeredAt: new Date(received) })).status).toBe(200);
    expect((await heldWebhooks(stack())).map((h) => h.topic)).toEqual(["shop/redact"]);

    // Asked every hour; still held a minute short of its limit.
    time.advanceAppOnly(UNCONFIRMED_REDACT_LIMIT_MS - 60_000);
    expect(await recheck()).toEqual({ settled: 0, unconfirmed: 1, failed: 0 });
    expect(await shopHoldings(stack())).toEqual(before);
    // The next check, an hour on, carries it out on its own word: still inside the 30 days.
    time.advanceAppOnly(UNCONFIRMED_UNINSTALL_RECHECK_MS);
    expect(time.clock.now().getTime() - received).toBeLessThan(30 * 24 * 3_600_000);
    expect(await recheck()).toEqual({ settled: 1, unconfirmed: 0, failed: 0 });
    expect(await shopHoldings(stack())).toMatchObject({ row: false, payments: 0, offlineTokens: 0 });
    expect(await heldWebhooks(stack())).toEqual([]);
    stack().standin.state.clearFaults();
  }, 60_000);
});
