// The shoppers' signed links (the payment page, and the return URLs stored in the gateway's
// orders) bind one payment of one shop; after the app's client secret is rotated, links signed
// with the previous one (SHOPIFY_API_SECRET_PREVIOUS) are still taken, and new ones are signed
// with the current secret only.
import { describe, expect, it } from "vitest";
import { parseEnv } from "../../app/config/env.server";
import { createReturnLinks } from "../../app/payments/return-links";

const payment = { id: "pay_1", shopId: "shop_1" };
const signature = (url: string) => new URL(url).searchParams.get("sig")!;

describe("signed payment links", () => {
  const before = createReturnLinks("https://pay.example.com", "old-secret");
  const rotated = createReturnLinks("https://pay.example.com", "new-secret", "old-secret");
  const rotatedOnly = createReturnLinks("https://pay.example.com", "new-secret");
  const signedBefore = signature(before.returnUrl(payment, "ok"));

  it("a link signed before the rotation is taken while the previous secret is set, and not once it is unset", () => {
    expect(rotated.verify(payment, signedBefore)).toBe(true);
    expect(rotatedOnly.verify(payment, signedBefore)).toBe(false);
  });

  it("new links are signed with the current secret, which is taken with or without the previous one", () => {
    const signedNow = signature(rotated.paymentPageUrl(payment));
    expect(signedNow).not.toBe(signedBefore);
    expect(rotated.verify(payment, signedNow)).toBe(true);
    expect(rotatedOnly.verify(payment, signedNow)).toBe(true);
    expect(before.verify(payment, signedNow)).toBe(false);
  });

  it("a signature binds its payment and shop under either secret", () => {
    expect(rotated.verify({ ...payment, id: "pay_2" }, signedBefore)).toBe(false);
    expect(rotated.verify({ ...payment, shopId: "shop_2" }, signedBefore)).toBe(false);
    expect(rotated.verify(payment, signedBefore.slice(0, -1))).toBe(false);
    expect(rotated.verify(payment, "")).toBe(false);
  });

  it("the previous secret is read from the environment, and unset by default", () => {
    expect(parseEnv({}).SHOPIFY_API_SECRET_PREVIOUS).toBeUndefined();
    expect(parseEnv({ SHOPIFY_API_SECRET_PREVIOUS: "old-secret" }).SHOPIFY_API_SECRET_PREVIOUS).toBe("old-secret");
  });
});
