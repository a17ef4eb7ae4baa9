// Shopify's app/uninstalled and shop/redact webhooks, correctly signed, with an
// X-Shopify-Triggered-At that is a well-formed ISO time anywhere in the four-digit calendar
// (year 0000 or 0001, 9999 with a negative offset). The header is not signed: a time outside
// this century is taken as no time (the webhook is carried out as one without the header), so
// the query on the shop's row (a redaction's 48 hours before it included) never fails with a
// 500 that every redelivery would repeat. On SQLite and PostgreSQL.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { shopifyWebhookHeaders } from "../support/shopify-webhooks";
import { stackOnDatabase } from "../support/stack";

/** A local time with a four-digit year and a UTC offset, as RFC 3339 writes it. */
const triggeredAtText = fc
  .tuple(
    fc.oneof(
      fc.date({ min: new Date("0000-01-01T00:00:00.000Z"), max: new Date("9999-12-31T23:59:59.999Z"), noInvalidDate: true }),
      fc.constantFrom(new Date("0000-01-01T00:00:00.000Z"), new Date("0001-01-01T00:00:00.000Z"), new Date("9999-12-31T23:59:59.000Z")),
    ),
    fc.integer({ min: -14 * 60, max: 14 * 60 }),
  )
  .map(([local, offsetMinutes]) => {
    const sign = offsetMinutes < 0 ? "-" : "+";
    const abs = Math.abs(offsetMinutes);
    const offset = offsetMinutes === 0 ? "Z" : `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
    return `${local.toISOString().slice(0, 19)}${offset}`;
  });

describe.each(["sqlite", "postgresql"] as const)("Shopify's shop webhooks' X-Shopify-Triggered-At on %s", (kind) => {
  const stack = stackOnDatabase(kind, { workers: false });

  it.each(["app/uninstalled", "shop/redact"])("%s, signed, with any well-formed triggered-at time is answered 200", async (topic) => {
    // A shop the app does not hold: the query runs all the same, and the test shop stays installed.
    const shop = "not-installed-shop.myshopify.com";
    await fc.assert(
      fc.asyncProperty(triggeredAtText, async (at) => {
        // Each topic's own body: app/uninstalled's is the shop object.
        const body = JSON.stringify(topic === "app/uninstalled" ? { id: 1, domain: shop, myshopify_domain: shop } : { shop_id: 1, shop_domain: shop });
        const response = await fetch(`${stack().app.url}/webhooks/${topic}`, {
          method: "POST",
          body,
          headers: shopifyWebhookHeaders(stack(), topic, body, shop, { "x-shopify-triggered-at": at }),
        });
        const text = await response.text();
        expect(response.status, `${topic} with X-Shopify-Triggered-At: ${at} answered ${response.status}: ${text.slice(0, 160)}`).toBe(200);
      }),
      { numRuns: 60 },
    );
  });
});
