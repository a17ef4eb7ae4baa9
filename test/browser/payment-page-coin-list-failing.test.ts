// The payment page while the gateway's coin list (GET /currencies) cannot be read. Once the
// order exists, everything to pay with is stored on the payment; the list only names the coin's
// network. The page asks for it at most once per load, one attempt (the shopper's read budget),
// and after a failure not again for a while: a failing gateway does not hold the shopper for
// seconds at every load, nor spend the device's quota on each.
import { beforeAll, describe, expect, it } from "vitest";
import { createOrderWithCurrency } from "../../app/payments/start-payment-session";
import { stackForFile } from "../support/stack";

const stack = stackForFile();

beforeAll(async () => {
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

async function faultsLeft(): Promise<number> {
  const armed = (await stack().sandboxControl("/sandbox/faults", undefined, "GET")) as { faults: { endpoint: string; remaining: number }[] };
  return armed.faults.filter((f) => f.endpoint === "currencies").reduce((sum, f) => sum + f.remaining, 0);
}

describe("the payment page while the gateway's coin list cannot be read", () => {
  it("shows the order's payment data at every load, asking for the coin list once, then not again for a while", async () => {
    const { session, delivery } = await stack().standin.state.startPayment({ test: true, locale: "en", amount: "25.00", currency: "EUR" });
    const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
    // The shopper picked ETH: the order, its address and amount are stored.
    expect(await createOrderWithCurrency(stack().services, payment.id, "ETH")).toMatchObject({ ok: true });

    // GET /currencies fails (500) from now on.
    await stack().sandboxControl("/sandbox/faults", { endpoint: "currencies", kind: "http_500", count: 100 });
    const loads: { calls: number; amountShown: boolean }[] = [];
    for (let i = 0; i < 3; i++) {
      const before = await faultsLeft();
      const answer = await fetch(delivery.redirectUrl!);
      const html = await answer.text();
      expect(answer.status).toBe(200);
      loads.push({ calls: before - (await faultsLeft()), amountShown: html.includes('id="amount"') });
    }
    // Everything to pay with is shown; the first load asks once, the next ones not at all.
    expect(loads.map((load) => load.amountShown)).toEqual([true, true, true]);
    expect(loads.map((load) => load.calls)).toEqual([1, 0, 0]);
  }, 120_000);
});
