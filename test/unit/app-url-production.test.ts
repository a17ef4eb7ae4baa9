// SHOPIFY_APP_URL in production: the address Shopify, the gateway's notifications and the
// shoppers' return links reach the app at. The production rules refuse a local one and one
// the app cannot append its paths to, so a mistake stops the start instead of leaving every
// gateway notification posted to the wrong place.
import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import { parseEnv } from "../../app/config/env.server";
import { createReturnLinks } from "../../app/payments/return-links";
import { notificationUrl } from "../../app/shops/onboarding.server";

const production = {
  NODE_ENV: "production",
  SHOPIFY_API_KEY: "k",
  SHOPIFY_API_SECRET: "s",
  CREDENTIALS_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString("base64")}`,
  MTLS_MODE: "proxy",
  MTLS_PROXY_HEADER_VALUE: randomBytes(32).toString("hex"),
};

function refusalOf(url: string): string {
  try {
    parseEnv({ ...production, SHOPIFY_APP_URL: url });
  } catch (error) {
    return (error as Error).message;
  }
  return "";
}

it("refuses the local addresses written another way: a trailing dot, an IPv4 address mapped in IPv6", () => {
  // "localhost." is the same name as "localhost" (the root's trailing dot), and ::ffff:127.0.0.1 is loopback.
  for (const local of ["https://localhost./", "https://localhost.:3000", "https://app.localhost.", "https://[::ffff:127.0.0.1]:8443", "https://[::ffff:7f00:1]", "https://[0:0:0:0:0:0:0:1]"]) {
    expect(refusalOf(local), local).toMatch(/SHOPIFY_APP_URL: must be the app's public https:\/\/ address/);
  }
});

it("refuses an address with a query, a fragment or a user's credentials, which the app's paths cannot be appended to", () => {
  const token = "tok_123";
  // What the gateway would be given: its notifications would go to "/", never to the webhook route.
  expect(new URL(notificationUrl("https://pay.example.com/?ref=partner", { webhookToken: token })).pathname).toBe("/");
  // And a shopper coming back from the gateway would land on the home page, not on the return route.
  expect(new URL(createReturnLinks("https://pay.example.com/#top", "secret").returnUrl({ id: "p1", shopId: "s1" }, "ok")).pathname).toBe("/");
  for (const url of ["https://pay.example.com/?ref=partner", "https://pay.example.com/#top", "https://user:secret-pass@pay.example.com"]) {
    const message = refusalOf(url);
    expect(message, url).toMatch(/SHOPIFY_APP_URL/);
    // The message names the variable, never a password written into it.
    expect(message).not.toContain("secret-pass");
  }
  // A plain public address, with or without a trailing slash, is taken.
  expect(refusalOf("https://pay.example.com/")).toBe("");
  expect(refusalOf("https://pay.example.com")).toBe("");
});
