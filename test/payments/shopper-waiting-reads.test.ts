// A shopper waits on the app's reads of their order (the payment page, its live status, the
// return from the gateway): when the gateway fails or does not answer, the app makes one short
// attempt and answers from what is stored, leaving the order to the page's live status and the
// reconciler, instead of the client's full retry budget (five attempts, up to 30 s). Counted on
// the sandbox's injected faults: each attempt uses one.
import { afterEach, beforeAll, expect, it } from "vitest";
import { createOrderWithCurrency } from "../../app/payments/start-payment-session";
import { stackForFile } from "../support/stack";

const stack = stackForFile();
const FAULTS = 20;

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

afterEach(async () => {
  await stack().sandboxControl("/sandbox/faults", undefined, "DELETE");
});

/** A payment with its ETH order, last read two minutes ago (the shopper left for the wallet app and comes back). */
async function openOrder() {
  const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "en", amount: "20.00", currency: "EUR" });
  const stored = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  expect(await createOrderWithCurrency(stack().services, stored.id, "ETH")).toMatchObject({ ok: true });
  const payment = await stack().services.db.payment.update({
    where: { id: stored.id },
    data: { lastCheckedAt: new Date(Date.now() - 120_000), expiresAt: new Date(Date.now() + 20 * 60_000) },
  });
  return { payment, pageUrl: new URL(delivery.redirectUrl!) };
}

/** Order reads (by identifier and by listing, as a return may read the shop's orders) fail with `kind` from now on; returns how many attempts the reads made since. */
async function failingReads(kind: "timeout" | "http_500"): Promise<() => Promise<number>> {
  const endpoints = ["orders.info", "orders.list"] as const;
  for (const endpoint of endpoints) await stack().sandboxControl("/sandbox/faults", { endpoint, kind, count: FAULTS });
  return async () => {
    const { faults } = (await stack().sandboxControl("/sandbox/faults", undefined, "GET")) as { faults: { remaining: number }[] };
    return endpoints.length * FAULTS - faults.reduce((left, fault) => left + fault.remaining, 0);
  };
}

async function open(url: string): Promise<{ status: number; location: string | null }> {
  const answer = await fetch(url, { redirect: "manual" });
  await answer.text();
  return { status: answer.status, location: answer.headers.get("location") };
}

it.each(["timeout", "http_500"] as const)("reloading the payment page while order reads fail (%s) makes one attempt and shows the page", async (kind) => {
  const { pageUrl } = await openOrder();
  const attempts = await failingReads(kind);
  expect((await open(pageUrl.toString())).status).toBe(200);
  expect(await attempts()).toBe(1);
}, 90_000);

it("'I want to pay another way' while order reads time out makes one attempt and takes the shopper back to checkout", async () => {
  const { payment } = await openOrder();
  const attempts = await failingReads("timeout");
  expect(await open(stack().services.links.returnUrl(payment, "ko"))).toEqual({ status: 303, location: payment.cancelUrl });
  expect(await attempts()).toBe(1);
}, 90_000);
