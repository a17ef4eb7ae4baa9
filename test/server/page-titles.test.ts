// Every page's document title says what the page is (WCAG 2.4.2): a browser tab and a screen
// reader announce it first, and in Shopify's admin App Bridge shows an admin page's title in the
// title bar, beside the app's name (so an admin page's title is its name alone). A page that
// works never carries an error page's title.
import { expect, it } from "vitest";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });

async function titlesOf(path: string): Promise<{ status: number; titles: string[] }> {
  const answer = await fetch(`${stack().app.url}${path}`);
  const html = await answer.text();
  return { status: answer.status, titles: [...html.matchAll(/<title>([^<]*)<\/title>/g)].map((match) => match[1]!) };
}

it.each([
  ["/", "Crypto checkout"],
  ["/app", "Crypto checkout"],
  ["/app/payments", "Payments"],
  ["/app/attention", "Needs attention"],
  ["/app/settings", "Settings"],
  ["/app/onboarding", "Gateway connection"],
  ["/app/health", "Health"],
  ["/app/data-requests", "Customer data requests"],
  ["/auth/login", "Log in · Crypto checkout"],
])("%s is titled %j", async (path, title) => {
  // The admin's pages for the stack's shop; the login page as a merchant from outside Shopify first sees it.
  const shopQuery = path.startsWith("/app") ? `?shop=${stack().shopDomain}` : "";
  expect(await titlesOf(`${path}${shopQuery}`)).toEqual({ status: 200, titles: [title] });
});

it("a payment's page is titled as one, and one the shop does not have as not found", async () => {
  const { session } = await stack().standin.state.startPayment({ test: true });
  const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  expect(await titlesOf(`/app/payments/${payment.id}?shop=${stack().shopDomain}`)).toEqual({ status: 200, titles: ["Payment"] });
  expect(await titlesOf(`/app/payments/no-such-payment?shop=${stack().shopDomain}`)).toEqual({ status: 404, titles: ["Payment not found"] });
});
