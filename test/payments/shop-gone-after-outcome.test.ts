// A shopper back on the app's payment page after the merchant uninstalled the app, for a payment
// whose outcome Shopify had already taken: the order is Shopify's from then on, so the page and
// the status it polls (and a coin picked on the page left open) send the shopper on through the return link to Shopify's next page, as the
// return link itself does, and never say the shop no longer takes the payment. A payment still
// open at the uninstall gets the "shop gone" answer (410).
import { beforeAll, expect, it } from "vitest";
import { handleAppUninstalled } from "../../app/shops/shopify-webhooks.server";
import { coinPickedOnAppPage, stackForFile, waitFor } from "../support/stack";

const stack = stackForFile();

interface Shopper {
  paymentId: string;
  pageUrl: string;
}

let paid: Shopper;
let expired: Shopper;
let open: Shopper;
/** On the coin list when the shop uninstalled: no order asked for. */
let choosing: Shopper;

/** The shopper's page with `actions` played on its gateway order, once Shopify has taken the outcome (`code`). */
async function endedAt(actions: Record<string, unknown>[], code: "RESOLVED" | "REJECTED"): Promise<Shopper> {
  const { session, pageUrl, payment } = await coinPickedOnAppPage(stack());
  for (const action of actions) await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId!}/actions`, action);
  await waitFor(async () => stack().standin.state.session(session.id)?.state.code === code, `Shopify's ${code}`, 30_000);
  await waitFor(async () => {
    const row = await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
    return row.nextActionUrl !== null;
  }, "Shopify's next page stored");
  return { paymentId: payment.id, pageUrl };
}

/** The redirects the shopper's browser follows from `url`, up to a page that is not one. */
async function followed(url: string): Promise<{ status: number; hops: string[] }> {
  const hops: string[] = [];
  let at = url;
  for (let i = 0; i < 5; i++) {
    const answer = await fetch(at, { redirect: "manual" });
    await answer.arrayBuffer();
    if (answer.status < 300 || answer.status >= 400) return { status: answer.status, hops };
    at = new URL(answer.headers.get("location")!, at).toString();
    hops.push(at);
  }
  throw new Error(`more than 5 redirects from ${url}`);
}

function statusUrl(pageUrl: string): string {
  const url = new URL(pageUrl);
  url.pathname += "/status";
  return url.toString();
}

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
  paid = await endedAt([{ action: "pay", amount: "exact" }, { action: "confirm" }], "RESOLVED");
  expired = await endedAt([{ action: "expire" }], "REJECTED");
  const picked = await coinPickedOnAppPage(stack());
  open = { paymentId: picked.payment.id, pageUrl: picked.pageUrl };
  const { session, delivery } = await stack().standin.state.startPayment({ test: true });
  const started = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  choosing = { paymentId: started.id, pageUrl: delivery.redirectUrl! };
  // The merchant uninstalls: Shopify revokes the app's tokens, then sends app/uninstalled.
  stack().standin.state.uninstallApp();
  await handleAppUninstalled(stack().services, stack().shopDomain);
}, 120_000);

it.each([
  ["paid and resolved", () => paid],
  ["expired and rejected", () => expired],
])("a payment %s before the uninstall: its page sends the shopper on to Shopify's next page, not to 'this shop no longer takes crypto payments'", async (_, shopper) => {
  const { paymentId, pageUrl } = shopper();
  const { nextActionUrl: nextPage } = await stack().services.db.payment.findUniqueOrThrow({ where: { id: paymentId } });
  expect(nextPage).toMatch(new RegExp(`^${stack().standin.origin}/`));
  const page = await followed(pageUrl);
  expect(page.hops.at(-1)).toBe(nextPage);
  expect(page.hops[0]).toMatch(/\/payments\/return\//);

  // The page left open polls its status, which answers where to go, not 410.
  const status = await fetch(statusUrl(pageUrl));
  expect(status.status).toBe(200);
  const live = (await status.json()) as { redirectUrl: string | null };
  expect(live.redirectUrl).toMatch(/\/payments\/return\//);
  expect((await followed(live.redirectUrl!)).hops.at(-1)).toBe(nextPage);

  // A coin picked on a page left open from before is sent on the same way.
  const picked = await fetch(pageUrl, { method: "POST", body: new URLSearchParams({ symbol: "ETH" }), redirect: "manual" });
  expect(picked.status).toBe(303);
  expect(picked.headers.get("location")).toMatch(/\/payments\/return\//);
}, 60_000);

it("a payment still open at the uninstall gets the shop-gone answer from its page and its status", async () => {
  expect((await fetch(open.pageUrl, { redirect: "manual" })).status).toBe(410);
  expect((await fetch(statusUrl(open.pageUrl))).status).toBe(410);
  expect((await fetch(open.pageUrl, { method: "POST", body: new URLSearchParams({ symbol: "ETH" }), redirect: "manual" })).status).toBe(410);
});

it("a shopper still choosing a coin at the uninstall is sent back to the checkout to pay another way: nothing can have been sent for an order never asked for", async () => {
  const { cancelUrl, gatewayOrderId } = await stack().services.db.payment.findUniqueOrThrow({ where: { id: choosing.paymentId } });
  expect(gatewayOrderId).toBeNull();
  const page = await fetch(choosing.pageUrl, { redirect: "manual" });
  expect(page.status).toBe(303);
  expect(page.headers.get("location")).toBe(cancelUrl);
  const status = await fetch(statusUrl(choosing.pageUrl));
  expect(status.status).toBe(200);
  expect(((await status.json()) as { redirectUrl: string | null }).redirectUrl).toBe(cancelUrl);
  const picked = await fetch(choosing.pageUrl, { method: "POST", body: new URLSearchParams({ symbol: "ETH" }), redirect: "manual" });
  expect(picked.status).toBe(303);
  expect(picked.headers.get("location")).toBe(cancelUrl);
  expect(await stack().services.db.payment.findUniqueOrThrow({ where: { id: choosing.paymentId }, select: { gatewayOrderId: true } })).toEqual({ gatewayOrderId: null });

  // The coin list's "pay another way", its return link's ko: the checkout too.
  const payment = await stack().services.db.payment.findUniqueOrThrow({ where: { id: choosing.paymentId } });
  const away = await fetch(stack().services.links.returnUrl(payment, "ko"), { redirect: "manual" });
  expect(away.status).toBe(303);
  expect(away.headers.get("location")).toBe(cancelUrl);
});
